import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RuntimeUsage } from "@agentplane/contracts/runtime";
import { launchChromium, requireChromium } from "@agentplane/testkit/browser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureWebAssets } from "../src/web/build.ts";
import { completeCommand, parseCommand } from "../tui/commands.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { TmuxSession, tmuxAvailability } from "./support/tmux.ts";

const TUI = join(fileURLToPath(new URL("..", import.meta.url)), "tui", "main.ts");
const tmux = tmuxAvailability();
const chromium = requireChromium();

describe("terminal UI commands", () => {
  it("parses commands, keeps /compact a message, and completes with Tab", () => {
    expect(parseCommand("/model us.claude-x")).toEqual({ kind: "model", slot: "main", value: "us.claude-x" });
    expect(parseCommand("/cron-model -")).toEqual({ kind: "model", slot: "cron", value: null });
    expect(parseCommand("/heartbeat-model")).toEqual({ kind: "model", slot: "heartbeat", value: undefined });
    expect(parseCommand("/compact the deploys")).toEqual({ kind: "message", text: "/compact the deploys" });
    expect(parseCommand("/verbose on")).toEqual({ kind: "verbose", value: true });
    expect(parseCommand("/threads 2")).toEqual({ kind: "threads", pick: 2, more: false });
    expect(parseCommand("/threads more")).toEqual({ kind: "threads", pick: undefined, more: true });
    expect(parseCommand("/nope")).toEqual({ kind: "unknown", text: "/nope" });
    expect(parseCommand("/usage")).toEqual({ kind: "usage", groupBy: "day" });
    expect(parseCommand("/usage source")).toEqual({ kind: "usage", groupBy: "source" });
    expect(completeCommand("/hea")).toEqual({ completed: "/heartbeat-model ", candidates: ["/heartbeat-model"] });
    expect(completeCommand("/h").candidates).toEqual(["/heartbeat-model", "/help"]);
    expect(completeCommand("/h").completed).toBe("/he");
    expect(completeCommand("/c").completed).toBe("/c");
    expect(completeCommand("/cr").completed).toBe("/cron-model ");
  });
});

describe.skipIf(!tmux.available || !chromium.available)(
  `terminal UI under tmux${tmux.reason}${chromium.reason}`,
  () => {
    let fake: FakeModel;
    let rt: TestRuntime;
    let session: TmuxSession;

    beforeAll(async () => {
      fake = await startFakeModel();
      fake.respond = (body) => ({
        content: [{ type: "text", text: `streamed answer to ${lastUserText(body)}` }],
        chunkDelayMs: lastUserText(body).includes("slowly") ? 1200 : 0,
      });
      rt = await startTestRuntime(fake, { env: { HEARTBEAT_INTERVAL_MINUTES: "0" } });
      // The shell stays after the program ends, to show the exit status and the terminal's line modes.
      const script = join(rt.home, "tui.sh");
      writeFileSync(
        script,
        `"${process.execPath}" "${TUI}"\necho "EXITED $?"\nstty -a | tr ' ;' '\\n\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '\necho\nsleep 60\n`,
      );
      session = new TmuxSession(`sh ${script}`, { columns: 100, rows: 30 }, { AGENT_HTTP_URL: rt.url });
    });

    afterAll(async () => {
      session?.kill();
      await rt?.close();
      await fake?.close();
    });

    it("connects, and /model sets the override that the web UI then shows", async () => {
      await session.waitForScreen((s) => s.includes("live]"));
      session.type("/mo");
      session.keys("Tab");
      await session.waitForScreen((s) => /^> \/model\s*$/m.test(s));
      session.type("tui-model-1");
      session.keys("Enter");
      await session.waitForScreen((s) => s.includes("main model: tui-model-1 (override tui-model-1)"));
      const profile = await rt.json<{ overrides: { main: string } }>("GET", "/agents/profile");
      expect(profile.body.overrides.main).toBe("tui-model-1");

      session.type("/cron-model");
      session.keys("Enter");
      await session.waitForScreen((s) => s.includes("cron model: tui-model-1 (empty: uses the main model)"));

      expect(await ensureWebAssets()).toBe(true);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${rt.url}/#/profile`);
        await page.getByText("In use: tui-model-1").first().waitFor();
        expect(await page.getByLabel("Main model").inputValue()).toBe("tui-model-1");
      } finally {
        await browser.close();
      }
    });

    it("shows the answer while it streams, then the whole of it", async () => {
      session.type("answer slowly please");
      session.keys("Enter");
      // Half of the answer, marked as still being written, before the rest arrives.
      const partial = await session.waitForScreen((s) => /^Prism: streamed answer to a…$/m.test(s));
      expect(partial).not.toContain("streamed answer to answer slowly please");
      expect(partial).toContain("working (Ctrl-C stops)");
      await session.waitForScreen((s) => /^Prism: streamed answer to answer slowly please$/m.test(s));
    });

    it("/usage shows the tokens and cost of the chat turns, by source", async () => {
      const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
      const main = threads.body.items.find((t) => t.main)?.id as string;
      await rt.request("POST", `/agents/threads/${main}/messages?stream=false`, { text: "count this" });
      const { body } = await rt.json<RuntimeUsage>("GET", "/agents/usage?groupBy=source");
      const web = body.groups.find((g) => g.key === "web");
      expect(web?.modelCalls).toBeGreaterThan(0);
      session.type("/usage source");
      session.keys("Enter");
      // The turns ran on the override set above (tui-model-1), which has no price: the cost is a floor.
      const figures = (f: RuntimeUsage["total"]) =>
        `${f.unpriced ? "≥ " : ""}$${f.costUsd.toFixed(4)}, ${f.inputTokens} in / ${f.outputTokens} out tokens, ${f.modelCalls} model`;
      const screen = await session.waitForScreen((s) => s.includes(`Last 30 days: ${figures(body.total)}`));
      expect(screen).toContain(`web: ${figures(web as RuntimeUsage["total"])}`);
    });

    it("shows an API error for a bad command value and keeps going", async () => {
      session.type(`/model ${"x".repeat(201)}`);
      session.keys("Enter");
      await session.waitForScreen((s) => /Too big|too long|at most|200/i.test(s));
      session.type("/nope");
      session.keys("Enter");
      await session.waitForScreen((s) => s.includes("Unknown command /nope"));
    });

    it("redraws within 60 columns after a resize", async () => {
      session.resize(60, 30);
      session.type("hello from a narrow terminal");
      session.keys("Enter");
      const screen = await session.waitForScreen((s) => s.includes("Prism: streamed answer to hello from a narrow"));
      for (const row of screen.split("\n")) expect(row.length).toBeLessThanOrEqual(60);
      expect(screen).toMatch(/\[Prism · Main · live\]/);
    });

    it("Ctrl-C twice quits and leaves the terminal as it found it", async () => {
      session.keys("C-c");
      await session.waitForScreen((s) => s.includes("Ctrl-C again to quit."));
      session.keys("C-c");
      // The shell prints the modes a moment after the exit status.
      const screen = await session.waitForScreen((s) => s.includes("EXITED") && /^-?icanon -?echo/m.test(s));
      expect(screen).toContain("EXITED 0");
      // Raw mode is undone: line editing and echo are back on (stty prints -icanon / -echo when off).
      expect(screen).toMatch(/^icanon echo\s*$/m);
    });
  },
);
