import { openDatabase } from "@agentplane/db";
import { generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandboxService, type SandboxService } from "../src/app.ts";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { getSandboxRow } from "../src/services/sandboxes.ts";
import { requireBwrap } from "./helpers.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const P = "prj_idle";

describe.skipIf(!bwrap.available)(`idle auto-stop${bwrap.reason}`, () => {
  let fx: VerbFixture;
  let service: SandboxService;
  beforeAll(async () => {
    const database = await openDatabase("pglite://memory");
    fx = await verbFixture(database);
    // The service's idle check runs against the same database and driver the verbs use.
    service = await createSandboxService({
      database,
      bus: fx.bus,
      keys: await generateInternalKeys(),
      logger: silentLogger(),
      authorizer: fx.deps.authorizer,
      config: { dataDir: "/nonexistent", idleCheckIntervalMs: 100 },
      driver: fx.driver,
    });
  });
  afterAll(async () => {
    await service?.close();
    await fx?.close();
  });

  const state = async (id: string) => (await getSandboxRow(fx.deps, P, id)).state;

  it("stops a sandbox after its idle timeout, postponed by exec activity, and audits why", async () => {
    const idle = await createSandbox(fx.deps, fx.actor, {
      projectId: P,
      name: "idle",
      labels: {},
      start: true,
      idleTimeoutSeconds: 1,
    });
    // Three seconds, so an exec slowed by a loaded machine still lands within its idle timeout.
    const busy = await createSandbox(fx.deps, fx.actor, {
      projectId: P,
      name: "busy",
      labels: {},
      start: true,
      idleTimeoutSeconds: 3,
    });
    const never = await createSandbox(fx.deps, fx.actor, {
      projectId: P,
      name: "never",
      labels: {},
      start: true,
      idleTimeoutSeconds: 0,
    });
    // Keep one sandbox busy with an exec every 300 ms until the idle one (timeout 1 s) is stopped.
    await vi.waitFor(
      async () => {
        const row = await getSandboxRow(fx.deps, P, busy.id);
        expect(
          (await execInSandbox(fx.deps, fx.actor, { command: "true", timeoutMs: 5000, sandbox: row })).exitCode,
        ).toBe(0);
        expect(await state(idle.id)).toBe("stopped");
      },
      { timeout: 15_000, interval: 300 },
    );
    expect(await state(busy.id)).toBe("running");
    expect((await fx.driver.status(idle.id)).phase).toBe("stopped");

    await expect.poll(() => state(busy.id), { timeout: 10_000, interval: 100 }).toBe("stopped");
    expect(await state(never.id)).toBe("running");
    // The records reach the bus through the outbox's relay, right after each stop's commit.
    await vi.waitFor(() => {
      const stops = fx.events.filter((e) => e.action === "sandbox.stopped");
      expect(stops.map((e) => e.details)).toEqual([{ reason: "idle timeout" }, { reason: "idle timeout" }]);
    });
  });
});
