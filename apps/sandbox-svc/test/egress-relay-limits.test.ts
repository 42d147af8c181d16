import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { find } from "../src/driver/local/process.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { newDriver, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const SEARCH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
const socat = find("socat", SEARCH) !== undefined && find("setpriv", SEARCH) !== undefined;

/** Host pids in the sandbox's pids cgroup whose command line mentions `word`. */
function inCgroup(dir: string, word: string): number[] {
  return readFileSync(join(dir, "cgroup.procs"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(word);
      } catch {
        return false;
      }
    });
}

describe.skipIf(!bwrap.available || !socat)(`the egress relay and a sandbox's limits${bwrap.reason}`, () => {
  let driver: LocalDriver;
  let server: Server;
  const held = new Set<Socket>();
  const id = "sbx_relaylim";
  const socketDir = mkdtempSync(join(tmpdir(), "relay-lim-"));
  const socketPath = join(socketDir, "proxy.sock");
  /** A stand-in for the egress proxy that holds every connection open and says nothing. */
  const proxy = { open: async () => socketPath, close: async () => {} };

  beforeAll(async () => {
    server = createServer((c) => {
      held.add(c);
      c.on("close", () => held.delete(c));
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    driver = newDriver({ egress: proxy });
  });
  afterAll(async () => {
    await driver.close();
    for (const c of held) c.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(socketDir, { recursive: true, force: true });
  });

  it("runs the relay, and the child it forks per connection, in the sandbox's cgroups", async (ctx) => {
    if (!driver.cgroups.controllers.includes("pids")) ctx.skip();
    await driver.start({ id, slug: "relay-lim", image: "default", env: {}, resources: { maxProcesses: 32 } });
    // Two connections held open for a while: socat forks a child for each.
    const open = runCommand(driver, id, {
      argv: ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/3128 4<>/dev/tcp/127.0.0.1/3128; sleep 2"],
      timeoutMs: 10_000,
    });
    const dir = join(driver.cgroups.parents.pids as string, id);
    for (let i = 0; i < 50 && held.size < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(held.size).toBe(2);
    // Without it a sandbox opening connections to 127.0.0.1:3128 made the host fork socat
    // processes that its process and memory limits never saw.
    expect(inCgroup(dir, "TCP-LISTEN:3128")).toHaveLength(3);
    expect((await open).exitCode).toBe(0);
  });
});
