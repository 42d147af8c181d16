import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { TmuxSession, tmuxAvailability } from "./support/tmux.ts";

const TUI = join(import.meta.dirname, "..", "tui", "main.ts");
const tmux = tmuxAvailability();

/** The runtime's threads have more than a page (50): the terminal UI must reach the older ones. */
describe.skipIf(!tmux.available)(`terminal UI with threads beyond the first page${tmux.reason}`, () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  let session: TmuxSession | undefined;
  /** Every thread in list order, as the largest page gives them. */
  let all: Array<{ id: string; title: string }>;

  beforeAll(async () => {
    fake = await startFakeModel();
    rt = await startTestRuntime(fake, { env: { HEARTBEAT_INTERVAL_MINUTES: "0" } });
    for (let i = 0; i < 60; i++) {
      const res = await rt.json<{ id: string }>("POST", "/agents/threads", {
        title: `old-${String(i).padStart(2, "0")}`,
      });
      expect(res.status).toBe(201);
    }
    const page = await rt.json<{ items: typeof all; nextCursor?: string }>("GET", "/agents/threads?limit=200");
    all = page.body.items;
    expect(all).toHaveLength(61);
    expect(page.body.nextCursor).toBeUndefined();
  });

  afterAll(async () => {
    session?.kill();
    await rt?.close();
    await fake?.close();
  });

  const open = (args: string) => {
    session?.kill();
    const script = join(rt.home, "tui.sh");
    writeFileSync(script, `"${process.execPath}" "${TUI}" ${args}\nsleep 60\n`);
    session = new TmuxSession(`sh ${script}`, { columns: 100, rows: 30 }, { AGENT_HTTP_URL: rt.url });
    return session;
  };

  it("--thread opens a thread that is not on the first page", async () => {
    const oldest = all[60] as { id: string; title: string };
    const s = open(`--thread ${oldest.id}`);
    await s.waitForScreen((screen) => screen.includes(`[Prism · ${oldest.title} · live]`));
  });

  it("--thread with an unknown id says so and opens the main thread", async () => {
    const s = open("--thread thr_nope");
    const screen = await s.waitForScreen((text) => text.includes("[Prism · Main · live]"));
    expect(screen).toContain("No thread thr_nope; opened Main");
  });

  it("/threads more lists the older threads, and /threads <n> switches to any of them", async () => {
    const s = open("");
    await s.waitForScreen((screen) => screen.includes("[Prism · Main · live]"));
    s.type("/threads");
    s.keys("Enter");
    const first = await s.waitForScreen((screen) => screen.includes("(older ones: /threads more)"));
    expect(first).toContain(`50. ${all[49]?.title}`);
    expect(first).not.toContain("51. ");

    s.type("/threads more");
    s.keys("Enter");
    const more = await s.waitForScreen((screen) => screen.includes(`61. ${all[60]?.title}`));
    expect(more).toContain(`51. ${all[50]?.title}`);
    s.type("/threads more");
    s.keys("Enter");
    await s.waitForScreen((screen) => screen.includes("No older threads to list"));

    const pick = all[55] as { id: string; title: string };
    s.type("/threads 56");
    s.keys("Enter");
    await s.waitForScreen((screen) => screen.includes(`[Prism · ${pick.title} · live]`));
    s.type("/threads 62");
    s.keys("Enter");
    await s.waitForScreen((screen) => screen.includes("No thread 62; /threads lists them"));
  });
});
