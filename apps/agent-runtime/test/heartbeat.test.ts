import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InProcessTeamChat } from "../src/chat/team-chat.ts";
import { HEARTBEAT_MAX_BYTES } from "../src/heartbeat/heartbeat.ts";
import { type FakeModel, lastUserText, type Reply, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";
import { text } from "./support/script.ts";

const CLASSIFIER = "claude-haiku-4-5";
let fake: FakeModel;
let rt: TestRuntime;
let teamChat: InProcessTeamChat;
let records: Array<Record<string, unknown>>;
let mainThread: string;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(() => rt?.close());

async function start() {
  teamChat = new InProcessTeamChat({ mode: "personal", ownerDm: { id: "D1", kind: "dm" } });
  const captured = capturingLogger();
  records = captured.records;
  rt = await startTestRuntime(fake, { teamChat, logger: captured.logger });
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  mainThread = threads.body.items.find((t) => t.main)?.id as string;
}

function checklist(content: string) {
  writeFileSync(join(rt.home, "HEARTBEAT.md"), content);
}

/** The main model answers `result`; the classifier answers `gate`. */
function model(result: string, gate: Reply | string) {
  fake.respond = (body) => {
    if (body.model === CLASSIFIER) return typeof gate === "string" ? text(gate) : gate;
    return text(result);
  };
}

async function webTexts(): Promise<string[]> {
  const { body } = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${mainThread}/messages`);
  return body.items.map((m) => m.text);
}

describe("heartbeat runs", () => {
  it("skip a missing or empty checklist without a model call", async () => {
    await start();
    const before = fake.requests.length;
    expect(await rt.runtime.heartbeat.tick()).toEqual({ status: "empty" });
    checklist("\n  <!-- add checks here -->\n\n");
    expect(await rt.runtime.heartbeat.tick()).toEqual({ status: "empty" });
    expect(fake.requests.length).toBe(before);
  });

  it("skip a checklist over the size limit with a warning and a skipped run, without reading or sending it", async () => {
    await start();
    model("All fine.", "SUPPRESS");
    const line = "- check the deploys\n";
    checklist(line.repeat(Math.ceil((HEARTBEAT_MAX_BYTES + 1) / line.length)));
    const before = fake.requests.length;
    const result = await rt.runtime.heartbeat.tick();
    expect(result).toMatchObject({
      status: "skipped",
      reason: expect.stringContaining("HEARTBEAT.md is larger than 65536 bytes"),
    });
    expect(fake.requests.length).toBe(before);
    expect(records.find((r) => r.msg === "heartbeat run skipped: checklist too large")).toMatchObject({
      limitBytes: 65536,
    });
    const stored = await rt.runtime.deps.database.db.selectFrom("heartbeat_run").selectAll().execute();
    expect(stored).toMatchObject([{ status: "skipped", reason: result.reason, text: null }]);
    // The API does not read it either.
    expect((await rt.json<{ checklist: string }>("GET", "/agents/heartbeat")).body.checklist).toBe("");
    // At the limit exactly, the run goes on.
    const atLimit = `- check the deploys\n${"x".repeat(HEARTBEAT_MAX_BYTES - line.length)}`;
    checklist(atLimit);
    expect((await rt.runtime.heartbeat.tick()).status).toBe("suppressed");
    expect(lastUserText(fake.requests[before]?.body ?? {})).toContain("check the deploys");
    expect((await rt.json<{ checklist: string }>("GET", "/agents/heartbeat")).body.checklist).toBe(atLimit);
  });

  it("DELIVER: broadcasts to web chat and team chat without the sentinel, from an isolated thread", async () => {
    await start();
    model("echo", "x");
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "private main chat" });
    await rt.json("PATCH", "/agents/models", { heartbeat: "hb-deployment", main: "main-deployment" });
    checklist("- Check the disk usage of the build server");
    model("Disk is 95% full on build-1.\nDELIVER", "DELIVER");
    const before = fake.requests.length;
    const result = await rt.runtime.heartbeat.tick();
    expect(result).toMatchObject({ status: "delivered", text: "Disk is 95% full on build-1." });
    const calls = fake.requests.slice(before);
    expect(calls.map((r) => r.body.model)).toEqual(["hb-deployment", CLASSIFIER]);
    // Its own thread: the main chat is not in the heartbeat run's context.
    expect(JSON.stringify(calls[0]?.body.messages)).not.toContain("private main chat");
    expect(lastUserText(calls[0]?.body ?? {})).toContain("Check the disk usage");
    expect(lastUserText(calls[1]?.body ?? {})).toContain("Disk is 95% full");
    expect((await webTexts()).at(-1)).toBe("Disk is 95% full on build-1.");
    expect(teamChat.posted).toEqual([{ destination: { id: "D1", kind: "dm" }, text: "Disk is 95% full on build-1." }]);
  });

  it("SUPPRESS: stores the result flagged and shows nothing", async () => {
    await start();
    checklist("- Anything new in the inbox?");
    model("Nothing new in the inbox.", "SUPPRESS");
    const shown = await webTexts();
    const live: string[] = [];
    rt.runtime.deps.live.follow(mainThread, (e) => live.push(e.event));
    const result = await rt.runtime.heartbeat.tick();
    expect(result.status).toBe("suppressed");
    expect(await webTexts()).toEqual(shown);
    expect(teamChat.posted).toEqual([]);
    expect(live).toEqual([]);
    const stored = await rt.runtime.deps.database.db.selectFrom("heartbeat_run").selectAll().execute();
    expect(stored).toMatchObject([{ status: "suppressed", text: "Nothing new in the inbox." }]);
  });

  it("a failing gate delivers (fail open) and logs why", async () => {
    await start();
    checklist("- Check certificates");
    model("The TLS certificate of api.example expires tomorrow.", { content: [], status: 500 });
    const result = await rt.runtime.heartbeat.tick();
    expect(result.status).toBe("delivered");
    expect(result.reason).toMatch(/^gate failed open: the classification call failed/);
    expect((await webTexts()).at(-1)).toBe("The TLS certificate of api.example expires tomorrow.");
    expect(records.some((r) => r.msg === "heartbeat gate failed open; delivering")).toBe(true);
    // An unclear answer fails open too.
    model("Backups failed last night.", "MAYBE");
    expect((await rt.runtime.heartbeat.tick()).status).toBe("delivered");
  });

  it("never starts while another run of the agent is executing", async () => {
    await start();
    checklist("- Check the queue");
    fake.respond = (body) => {
      if (body.model === CLASSIFIER) return text("DELIVER");
      if (lastUserText(body) === "slow question") return { ...text("slow answer"), delayMs: 1500 };
      return text("Queue is stuck.");
    };
    const turn = rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "slow question" });
    await waitFor(() => fake.requests.some((r) => lastUserText(r.body) === "slow question") || undefined);
    const before = fake.requests.length;
    expect(await rt.runtime.heartbeat.tick()).toEqual({ status: "busy" });
    expect(fake.requests.length).toBe(before);
    await turn;
    // Two ticks at once: one run, the second finds it running.
    const [first, second] = await Promise.all([rt.runtime.heartbeat.tick(), rt.runtime.heartbeat.tick()]);
    expect(first.status).toBe("delivered");
    expect(second).toEqual({ status: "busy" });
  });
});

describe("HEARTBEAT_INTERVAL_MINUTES", () => {
  it("defaults to 30, 0 disables, anything else is a configuration error naming it", async () => {
    const { loadConfig, ConfigError } = await import("../src/config.ts");
    const base = { LLM_PROVIDER: "cloud-b", CLOUD_B_API_KEY: "k", CLOUD_B_RESOURCE_NAME: "r" };
    expect(loadConfig(base).env.HEARTBEAT_INTERVAL_MINUTES).toBe(30);
    expect(loadConfig({ ...base, HEARTBEAT_INTERVAL_MINUTES: "0" }).env.HEARTBEAT_INTERVAL_MINUTES).toBe(0);
    expect(() => loadConfig({ ...base, HEARTBEAT_INTERVAL_MINUTES: "soon" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, HEARTBEAT_INTERVAL_MINUTES: "-5" })).toThrow(/HEARTBEAT_INTERVAL_MINUTES/);
  });
});

describe("an interval that would make the heartbeat spin", () => {
  for (const minutes of ["0.0005", "50000"]) {
    it(`HEARTBEAT_INTERVAL_MINUTES=${minutes} runs no checklist within the first second`, async () => {
      const captured = capturingLogger();
      records = captured.records;
      fake.requests.length = 0;
      model("Disk is 95% full.", "DELIVER");
      // 0.0005 minutes is 30 ms; 50000 minutes is past what a Node timer takes (taken as 1 ms).
      rt = await startTestRuntime(fake, {
        teamChat: null,
        logger: captured.logger,
        env: { HEARTBEAT_INTERVAL_MINUTES: minutes },
      });
      checklist("- check the disk\n");
      await new Promise((r) => setTimeout(r, 1000));
      expect(fake.requests).toHaveLength(0);
      if (minutes === "0.0005")
        expect(records.some((r) => String(r.msg).includes("below the shortest interval"))).toBe(true);
    });
  }
});
