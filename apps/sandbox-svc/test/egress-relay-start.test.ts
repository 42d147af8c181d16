import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseTargets } from "@agentplane/db/testing";
import { InsertQueryNode, type KyselyPlugin, type QueryId } from "kysely";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { find } from "../src/driver/local/process.ts";
import type { DriverEvent, SandboxRuntimeSpec } from "../src/driver/types.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { createSandbox } from "../src/services/create.ts";
import { startLifecycle } from "../src/services/lifecycle.ts";
import { getSandboxRow } from "../src/services/sandboxes.ts";
import { FakeProxy } from "./egress-fixture.ts";
import { newDriver, requireBwrap } from "./helpers.ts";
import { verbFixture } from "./service-fixture.ts";

// The start of a sandbox with egress answers once its mounts are ready, while its egress relay
// (socat in its network namespace) may still be starting. These tests slow the relay down, or make
// it fail, with a `socat` of their own in the driver's search path.
const bwrap = requireBwrap();
const SEARCH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
const realSocat = find("socat", SEARCH);
const realSetpriv = find("setpriv", SEARCH);
const skip = !bwrap.available || !realSocat || !realSetpriv;
const reason = `${bwrap.reason}${skip && bwrap.available ? " (skipped: socat or setpriv missing)" : ""}`;

/** Holds the result of each INSERT into `table` until `until` settles (inside its transaction). */
function holdInsertsInto(table: string, until: Promise<unknown>): KyselyPlugin {
  const held = new Set<QueryId>();
  return {
    transformQuery(args) {
      const node = args.node;
      if (InsertQueryNode.is(node) && node.into?.table.identifier.name === table) held.add(args.queryId);
      return node;
    },
    async transformResult(args) {
      if (held.delete(args.queryId)) await until;
      return args.result;
    },
  };
}

const dirs: string[] = [];
/** A search path with the host's bwrap, nsenter, unshare and setpriv, and `socat` running `script`. */
function toolsWithSocat(script: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "relay-tools-"));
  dirs.push(dir);
  for (const tool of ["bwrap", "nsenter", "unshare", "setpriv"]) {
    const path = find(tool, SEARCH);
    if (path) symlinkSync(path, join(dir, tool));
  }
  writeFileSync(join(dir, "socat"), `#!/bin/sh\n${script}\n`);
  chmodSync(join(dir, "socat"), 0o755);
  return [dir];
}
const slowSocat = (seconds: number) => toolsWithSocat(`sleep ${seconds}\nexec ${realSocat} "$@"`);
const failingSocat = (seconds: number) => toolsWithSocat(`sleep ${seconds}\necho boom >&2\nexit 3`);

function spec(id: string, extra: Partial<SandboxRuntimeSpec> = {}): SandboxRuntimeSpec {
  return { id, slug: id.replace(/_/g, "-"), image: "default", env: {}, resources: {}, ...extra };
}

/** Connects to the relay's 127.0.0.1:3128 from inside and prints what the (fake) proxy answered. */
const THROUGH_RELAY = "exec 3<>/dev/tcp/127.0.0.1/3128 && cat <&3";

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip)(`a start with egress and its relay${reason}`, () => {
  const proxy = new FakeProxy();
  let driver: LocalDriver | undefined;
  afterEach(async () => {
    await driver?.close();
    driver = undefined;
  });
  afterAll(() => proxy.closeAll());

  it("answers before a slow relay listens; the main command and an exec wait for it", async () => {
    driver = newDriver({ egress: proxy, searchPath: slowSocat(1.5) });
    const started = performance.now();
    await driver.start(
      spec("sbx_slowrelay", {
        command: ["/bin/bash", "-c", `(${THROUGH_RELAY}) > /workspace/main; exec sleep infinity`],
      }),
    );
    expect(performance.now() - started).toBeLessThan(1200);
    const r = await runCommand(driver, "sbx_slowrelay", {
      argv: ["/bin/bash", "-c", THROUGH_RELAY],
      timeoutMs: 10_000,
    });
    expect(r, JSON.stringify(r)).toMatchObject({ exitCode: 0, stdout: "proxied\n" });
    const main = join(driver.workspaceDir("sbx_slowrelay"), "main");
    await vi.waitFor(() => expect(readFileSync(main, "utf8")).toBe("proxied\n"), { timeout: 5000 });
  });

  it("kills the sandbox and reports why when the relay fails after the start answered", async () => {
    driver = newDriver({ egress: proxy, searchPath: failingSocat(0.5) });
    const events: DriverEvent[] = [];
    driver.onEvent((e) => events.push(e));
    await driver.start(spec("sbx_badrelay"));
    expect(driver.failedAfterStart("sbx_badrelay")).toBeUndefined();
    const exec = runCommand(driver, "sbx_badrelay", { argv: ["true"], timeoutMs: 10_000 });
    await expect(exec).rejects.toMatchObject({
      status: 409,
      detail: expect.stringMatching(/failed: egress relay failed to start: .*boom/),
    });
    await vi.waitFor(() => expect(events).toHaveLength(1), { timeout: 5000 });
    expect(events[0]).toMatchObject({
      sandboxId: "sbx_badrelay",
      status: { phase: "failed", message: expect.stringMatching(/^egress relay failed to start: .*boom/) },
    });
    expect(driver.failedAfterStart("sbx_badrelay")).toMatch(/egress relay failed to start/);
    expect((await driver.status("sbx_badrelay")).phase).toBe("stopped");
  });
});

const targets = await databaseTargets();
describe.each(targets)("a relay failing after the start answered, on $name", (target) => {
  describe.skipIf(!target.available || skip)(`${target.reason}${reason}`, () => {
    it("marks the sandbox failed with the reason, once it is running", async () => {
      const { database, cleanup } = await target.open();
      const fx = await verbFixture(database, { driver: { egress: new FakeProxy(), searchPath: failingSocat(1) } });
      const lifecycle = await startLifecycle(fx.deps, fx.deps.sessions);
      try {
        const row = await createSandbox(fx.deps, fx.actor, {
          projectId: "prj_t",
          name: "late",
          labels: {},
          start: true,
        });
        expect(row.state).toBe("running");
        await vi.waitFor(
          async () => {
            const now = await getSandboxRow(fx.deps, "prj_t", row.id);
            expect(now).toMatchObject({
              state: "failed",
              last_error: expect.stringMatching(/egress relay failed.*boom/),
            });
          },
          { timeout: 8000, interval: 50 },
        );
      } finally {
        lifecycle.stop();
        await fx.close();
        await cleanup();
      }
    });

    it("answers the start failed when the relay fails before the row says running", async () => {
      const { database, cleanup } = await target.open();
      const fx = await verbFixture(database, { driver: { egress: new FakeProxy(), searchPath: failingSocat(0.3) } });
      const failed = new Promise<void>((resolve) => fx.driver.onEvent(() => resolve()));
      try {
        // The sandbox's row, inserted in its transaction, is held there until the relay has
        // failed: the start answered by the driver is written only afterwards. (The create's
        // limits are counted before the driver starts, so no lock from outside can do this.)
        const deps = { ...fx.deps, db: fx.deps.db.withPlugin(holdInsertsInto("sandboxes", failed)) };
        const create = createSandbox(deps, fx.actor, { projectId: "prj_t", name: "early", labels: {}, start: true });
        create.catch(() => {});
        await expect(create).rejects.toMatchObject({
          status: 500,
          detail: expect.stringMatching(/failed to start: egress relay failed to start: .*boom/),
        });
        const [row] = await fx.deps.db.selectFrom("sandboxes").selectAll().execute();
        expect(row).toMatchObject({ state: "failed", last_error: expect.stringMatching(/egress relay failed.*boom/) });
        await vi.waitFor(() => expect(fx.events.map((e) => e.action)).toContain("sandbox.start_failed"), {
          timeout: 5000,
        });
        expect(fx.events.map((e) => e.action)).not.toContain("sandbox.started");
      } finally {
        await fx.close();
        await cleanup();
      }
    });
  });
});
