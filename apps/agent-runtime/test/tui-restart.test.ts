import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, tempHome } from "./support/runtime.ts";
import { TmuxSession, tmuxAvailability } from "./support/tmux.ts";

const MAIN = join(import.meta.dirname, "..", "src", "main.ts");
const TUI = join(import.meta.dirname, "..", "tui", "main.ts");
const tmux = tmuxAvailability();

/** A port free now, so that the runtime comes back where the terminal UI looks for it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** `src/main.ts` as its own Node process, resolved once it listens. */
async function spawnRuntime(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? "", ...env, HOST: "127.0.0.1", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
      if (/"url":"http:\/\//.test(out)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`runtime exited with ${code}: ${stderr}`)));
  });
  return child;
}

const killHard = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });

describe.skipIf(!tmux.available)(`terminal UI across a runtime restart${tmux.reason}`, () => {
  let fake: FakeModel;
  let runtime: ChildProcess | undefined;
  let session: TmuxSession | undefined;
  let env: Record<string, string>;
  let url: string;

  beforeAll(async () => {
    fake = await startFakeModel();
    fake.respond = (body) => ({ content: [{ type: "text", text: `streamed answer to ${lastUserText(body)}` }] });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = { ...fakeModelEnv(fake, tempHome()), PORT: String(port), HEARTBEAT_INTERVAL_MINUTES: "0" };
    runtime = await spawnRuntime(env);
  });

  afterAll(async () => {
    session?.kill();
    if (runtime) await killHard(runtime);
    await fake?.close();
  });

  it("says the runtime is gone while it is down, reconnects when it is back and follows the thread again", async () => {
    session = new TmuxSession(`"${process.execPath}" "${TUI}"`, { columns: 100, rows: 30 }, { AGENT_HTTP_URL: url });
    await session.waitForScreen((s) => s.includes("· live]"), 20_000);
    session.type("before the restart");
    session.keys("Enter");
    await session.waitForScreen((s) => /: streamed answer to before the restart$/m.test(s));

    // The runtime process dies without a goodbye: the UI says so and keeps trying.
    await killHard(runtime as ChildProcess);
    const down = await session.waitForScreen((s) => /reconnecting…\]|runtime unreachable/.test(s), 20_000);
    expect(down).not.toMatch(/\n\s+at |TypeError|ECONNREFUSED\n/);

    // The same runtime (same database) comes back on the same address.
    runtime = await spawnRuntime(env);
    // A turn posted through the API (another client) reaches the terminal over the re-opened stream.
    const threads = (await (await fetch(`${url}/agents/threads`)).json()) as {
      items: Array<{ id: string; main: boolean }>;
    };
    const main = threads.items.find((t) => t.main)?.id;
    const posted = await fetch(`${url}/agents/threads/${main}/messages?stream=false`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "sent while the terminal reconnected" }),
    });
    expect(posted.status).toBe(200);
    await session.waitForScreen(
      (s) => s.includes("· live]") && /: streamed answer to sent while the terminal reconnected$/m.test(s),
      20_000,
    );

    // And the terminal's own chat goes on where it was.
    session.type("after the restart");
    session.keys("Enter");
    const screen = await session.waitForScreen((s) => /: streamed answer to after the restart$/m.test(s), 20_000);
    // Each line once: nothing from before the restart was printed again.
    expect(screen.match(/streamed answer to before the restart/g)).toHaveLength(1);
    expect(screen.match(/streamed answer to sent while the terminal reconnected/g)).toHaveLength(1);
    expect(fake.requests.map((r) => lastUserText(r.body))).toEqual([
      "before the restart",
      "sent while the terminal reconnected",
      "after the restart",
    ]);
  });
});
