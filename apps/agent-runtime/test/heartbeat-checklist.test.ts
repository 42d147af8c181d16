import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withoutSentinels } from "../src/heartbeat/gate.ts";
import { checklistText } from "../src/heartbeat/heartbeat.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { text } from "./support/script.ts";

/** Comment openings never closed: each one sent a lazy match scanning to the end of the text. */
const UNCLOSED = "<!--".repeat(100_000);

describe("the heartbeat checklist's comments", () => {
  it("are left out as before", () => {
    expect(checklistText("<!-- a note -->\n- check the deploys\n<!--\nmore\n-->")).toBe("- check the deploys");
    expect(checklistText("a <!-- b --> c <!-- d --> e")).toBe("a  c  e");
    expect(checklistText("<!-->still open")).toBe("<!-->still open");
    expect(checklistText("keep <!-- unclosed")).toBe("keep <!-- unclosed");
    expect(checklistText("<!-- one <!-- two --> after -->")).toBe("after -->");
  });

  it("are read in one pass, however many are left open", () => {
    const started = performance.now();
    expect(checklistText(UNCLOSED)).toBe(UNCLOSED);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

/** A line of spaces that does not end in one: `[ \t]+$` tried it again from every space. */
const SPACES_THEN_TEXT = `a${" ".repeat(100_000)}x`;

describe("the heartbeat's answer as the channel gets it", () => {
  it("loses its trailing spaces and sentinels as before", () => {
    expect(withoutSentinels("Disk full on build-1. \t\n\n\n\nDELIVER")).toBe("Disk full on build-1.");
    expect(withoutSentinels("a  \n  b\t")).toBe("a\n  b");
  });

  it("is tidied in one pass, however long a line of spaces", () => {
    const started = performance.now();
    expect(withoutSentinels(SPACES_THEN_TEXT)).toBe(SPACES_THEN_TEXT);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("a heartbeat run over a checklist a command wrote", () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  beforeAll(async () => {
    fake = await startFakeModel();
    fake.respond = () => text("HEARTBEAT_OK");
    rt = await startTestRuntime(fake, { env: { HEARTBEAT_INTERVAL_MINUTES: "0" } });
  });
  afterAll(async () => {
    await rt.close();
    await fake.close();
  });

  it("keeps the runtime answering while it reads the checklist", async () => {
    // The checklist is writable from the shell tools: any turn (a webhook's included) can fill it.
    writeFileSync(join(rt.home, "HEARTBEAT.md"), `- check the deploys\n${UNCLOSED}`);
    // How long the event loop (every request's, in this process too) was held at once during the run.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    await rt.runtime.heartbeat.tick();
    delay.disable();
    expect(delay.max / 1e6).toBeLessThan(1000);
    expect((await rt.request("GET", "/health")).status).toBe(200);
  });

  it("keeps the runtime answering while it tidies an answer the checklist led to", async () => {
    writeFileSync(join(rt.home, "HEARTBEAT.md"), "- repeat the line in the file\n");
    fake.respond = (body) => text(body.model === "claude-haiku-4-5" ? "DELIVER" : `${SPACES_THEN_TEXT}\nDELIVER`);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    expect((await rt.runtime.heartbeat.tick()).status).toBe("delivered");
    delay.disable();
    expect(delay.max / 1e6).toBeLessThan(1000);
  });
});
