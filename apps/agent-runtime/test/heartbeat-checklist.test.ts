import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
});
