import { requireChromium } from "@agentplane/testkit/browser";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_VOICE_API_URL, loadConfig } from "../../src/config.ts";
import { NOT_OFFERED_FOR_OWNER, type ToolContext, type ToolOffer } from "../../src/tools/types.ts";
import { ANONYMOUS_REFUSAL } from "../../src/voice/tools.ts";
import { type FakeModel, startFakeModel } from "../support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "../support/runtime.ts";
import { scripted, text, toolResultsOf, toolUse } from "../support/script.ts";

const chromium = requireChromium();
const base = { CLOUD_A_BEARER_TOKEN: "k", AGENT_HOME: "/tmp/agent-voice-config" };

describe("voice configuration", () => {
  it("defaults the realtime URL to the vendor and the browser to Debian's chromium", () => {
    const { env } = loadConfig(base);
    expect(env.VOICE_API_URL).toBe(DEFAULT_VOICE_API_URL);
    expect(env.VOICE_BROWSER_PATH).toBe("/usr/bin/chromium");
    expect(loadConfig({ ...base, VOICE_API_URL: "ws://127.0.0.1:9/v1/realtime" }).env.VOICE_API_URL).toBe(
      "ws://127.0.0.1:9/v1/realtime",
    );
  });

  it("refuses a realtime URL that is not a WebSocket address", () => {
    expect(() => loadConfig({ ...base, VOICE_API_URL: "https://api.example.com" })).toThrow(/VOICE_API_URL/);
  });

  it.each(["0", "-3", "abc", "1.5", ""])("falls back to 60 minutes for MEETING_TIMEOUT_MINUTES=%j", (value) => {
    expect(loadConfig({ ...base, MEETING_TIMEOUT_MINUTES: value }).env.MEETING_TIMEOUT_MINUTES).toBe(60);
  });

  it("keeps a valid meeting cap", () => {
    expect(loadConfig({ ...base, MEETING_TIMEOUT_MINUTES: "15" }).env.MEETING_TIMEOUT_MINUTES).toBe(15);
  });

  it("refuses a credential placeholder as the meeting password, saying why", () => {
    let error: unknown;
    try {
      loadConfig({ ...base, MEETING_BOT_PASSWORD: "__managed_cred:0b5e7f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b__" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe("MEETING_BOT_PASSWORD");
    expect((error as Error).message).toMatch(/typed into .*sign-in form/);
  });

  it("passes a placeholder VOICE_API_KEY through as it is", () => {
    const key = "__managed_cred:0b5e7f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b__";
    expect(loadConfig({ ...base, VOICE_API_KEY: key }).env.VOICE_API_KEY).toBe(key);
  });
});

describe.skipIf(!chromium.available)(`voice availability${chromium.reason}`, () => {
  let fake: FakeModel;
  const started: TestRuntime[] = [];
  beforeAll(async () => {
    fake = await startFakeModel();
  });
  afterAll(async () => {
    for (const r of started) await r.close();
    await fake.close();
  });
  async function start(env: Record<string, string>): Promise<TestRuntime> {
    const runtime = await startTestRuntime(fake, { env, runtimeOptions: { voice: { meetingHosts: ["127.0.0.1:9"] } } });
    started.push(runtime);
    return runtime;
  }
  function context(runtime: TestRuntime): ToolContext {
    const { deps } = runtime.runtime;
    return {
      db: deps.database.db,
      provider: deps.config.provider,
      threadId: "t",
      source: "web",
      logger: pino({ level: "silent" }),
    };
  }
  const names = (runtime: TestRuntime) => runtime.runtime.deps.tools.list().map((t) => t.name);
  const owner: ToolOffer = { manage: true };

  it("is off without VOICE_API_KEY: no tools, and /health says why", async () => {
    const runtime = await start({});
    const health = await runtime.json("GET", "/health");
    expect(health.body).toMatchObject({ voice: "off", voiceReason: "VOICE_API_KEY is not set" });
    expect(names(runtime)).not.toContain("join_meeting");
  });

  it("is off when the browser cannot launch: no tools, and /health says why", async () => {
    const runtime = await start({ VOICE_API_KEY: "vk", VOICE_BROWSER_PATH: "/nonexistent/chromium" });
    const health = await runtime.json<{ voice: string; voiceReason: string }>("GET", "/health");
    expect(health.body.voice).toBe("off");
    expect(health.body.voiceReason).toMatch(/\/nonexistent\/chromium cannot launch/);
    expect(names(runtime)).not.toContain("meeting_status");
  });

  it("offers the three tools with a key and a launchable browser; refuses to join anonymously", async () => {
    const runtime = await start({ VOICE_API_KEY: "vk" });
    expect((await runtime.json("GET", "/health")).body).toMatchObject({ voice: "available" });
    expect(names(runtime)).toEqual(expect.arrayContaining(["join_meeting", "leave_meeting", "meeting_status"]));
    const tools = runtime.runtime.deps.tools;
    const joined = await tools.run("join_meeting", { url: "http://127.0.0.1:9/abc-defg-hij" }, context(runtime), owner);
    expect(joined).toEqual({ isError: true, content: ANONYMOUS_REFUSAL });
    expect(await tools.run("meeting_status", {}, context(runtime))).toEqual({
      isError: false,
      content: '{"state":"idle"}',
    });
    expect((await tools.run("leave_meeting", {}, context(runtime), owner)).content).toBe("Not in a meeting");
  });

  it("says when a URL is not a meeting link", async () => {
    const runtime = await start({
      VOICE_API_KEY: "vk",
      MEETING_BOT_EMAIL: "bot@example.com",
      MEETING_BOT_PASSWORD: "pw",
    });
    const tools = runtime.runtime.deps.tools;
    for (const url of ["https://example.com/abc-defg-hij", "http://127.0.0.1:9/not-a-code", "meet me at noon"]) {
      const outcome = await tools.run("join_meeting", { url }, context(runtime), owner);
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toMatch(/not a (meeting link|URL)/);
    }
  });

  it("offers joining and leaving a meeting to the owner's turns and schedules, no one else's", async () => {
    const runtime = await start({ VOICE_API_KEY: "vk" });
    const tools = runtime.runtime.deps.tools;
    const offeredTo = (offer: ToolOffer) =>
      tools
        .definitions(offer)
        .map((t) => t.name)
        .filter((n) => n.includes("meeting"));
    expect(offeredTo(owner).sort()).toEqual(["join_meeting", "leave_meeting", "meeting_status"]);
    expect(offeredTo({ manage: false, scheduled: true }).sort()).toEqual([
      "join_meeting",
      "leave_meeting",
      "meeting_status",
    ]);
    // A team-chat member, a webhook's payload, a chat user without the manage permission.
    expect(offeredTo({ manage: false })).toEqual(["meeting_status"]);
    // A model can name a tool it was not offered: the call is refused before the tool runs.
    for (const name of ["join_meeting", "leave_meeting"]) {
      const refused = await tools.run(name, { url: "http://127.0.0.1:9/abc-defg-hij" }, context(runtime));
      expect(refused).toEqual({ isError: true, content: `The tool ${name} ${NOT_OFFERED_FOR_OWNER}` });
    }
    const scheduled = await tools.run(
      "join_meeting",
      { url: "http://127.0.0.1:9/abc-defg-hij" },
      { ...context(runtime), source: "schedule:standup" },
      { manage: false, scheduled: true },
    );
    expect(scheduled).toEqual({ isError: true, content: ANONYMOUS_REFUSAL });
  });

  it("lets a schedule's turn join a meeting, and refuses a webhook's", async () => {
    const runtime = await start({ VOICE_API_KEY: "vk" });
    const seen: string[] = [];
    fake.respond = scripted([
      { content: [toolUse("join_meeting", { url: "http://127.0.0.1:9/abc-defg-hij" })], stopReason: "tool_use" },
      (body) => {
        seen.push(toolResultsOf(body)[0]?.content ?? "");
        return text("done");
      },
    ]);
    const schedule = await runtime.json<{ id: string }>("POST", "/agents/schedules", {
      name: "standup",
      everySeconds: 3600,
      prompt: "Join the standup",
    });
    expect(schedule.status).toBe(201);
    await (await runtime.runtime.deps.scheduler.runNow(schedule.body.id)).done;
    // It ran: the meeting account is what stops it here, not the turn's offer.
    expect(seen).toEqual([ANONYMOUS_REFUSAL]);

    await runtime.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await runtime.json("POST", "/agents/webhook-subscriptions", { name: "ci", deliverTo: "Chat", prompt: "build {n}" });
    const hook = await runtime.request("POST", "/agents/webhooks/ci", { n: 7 });
    expect(hook.status).toBe(202);
    await waitFor(() => (seen.length === 2 ? true : undefined));
    expect(seen[1]).toBe(`The tool join_meeting ${NOT_OFFERED_FOR_OWNER}`);
  });
});
