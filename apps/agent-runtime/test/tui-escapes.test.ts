import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminalText } from "../tui/terminal-text.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { TmuxSession, tmuxAvailability } from "./support/tmux.ts";

const TUI = join(import.meta.dirname, "..", "tui", "main.ts");
const tmux = tmuxAvailability();

/** What an outsider can put in front of the terminal: a title, the clipboard, a cleared screen. */
const HOSTILE = "\u001b]2;PWNED\u0007\u001b]52;c;ZWNobyBldmls\u0007\u001b[2J\u001b[Hspoof\rover\u202eevil";

describe("terminal text", () => {
  it("shows control and bidirectional formatting characters instead of passing them to the terminal", () => {
    const shown = terminalText(HOSTILE);
    expect(shown).not.toMatch(/[\p{Cc}\u202e]/u);
    expect(shown).toContain("]2;PWNED");
    expect(terminalText("two\nlines\tand a tab")).toBe("two\nlines\tand a tab");
  });
});

describe.skipIf(!tmux.available)(`terminal UI showing text from outside${tmux.reason}`, () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  let session: TmuxSession | undefined;

  beforeAll(async () => {
    fake = await startFakeModel();
    rt = await startTestRuntime(fake, { env: { HEARTBEAT_INTERVAL_MINUTES: "0" } });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    const created = await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "alerts",
      deliverOnly: true,
      prompt: "Alert: {summary}",
    });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    session?.kill();
    await rt?.close();
    await fake?.close();
  });

  it("a webhook payload's escape sequences neither set the terminal's title nor reach it raw", async () => {
    const script = join(rt.home, "tui.sh");
    writeFileSync(script, `"${process.execPath}" "${TUI}"\nsleep 60\n`);
    session = new TmuxSession(`sh ${script}`, { columns: 100, rows: 30 }, { AGENT_HTTP_URL: rt.url });
    await session.waitForScreen((screen) => screen.includes("[Prism · Main · live]"));
    const before = session.title();

    const res = await rt.request("POST", "/agents/webhooks/alerts", { summary: HOSTILE });
    expect(res.status).toBe(200);
    const screen = await session.waitForScreen((text) => text.includes("Alert:"));
    expect(screen).toContain("]2;PWNED");
    expect(screen).toContain("spoof");
    expect(session.title()).toBe(before);
    expect(session.title()).not.toContain("PWNED");
  });
});
