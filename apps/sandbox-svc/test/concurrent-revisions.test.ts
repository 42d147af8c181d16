import { openDatabase } from "@agentplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { listRevisions, updateSandbox } from "../src/services/revisions.ts";
import { getSandboxRow, startSandbox } from "../src/services/sandboxes.ts";
import { stopSandbox } from "../src/services/stop-delete.ts";
import { requireBwrap } from "./helpers.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const bwrap = requireBwrap();
const P = "prj_race";

/**
 * Changes that race one another: each is either refused (and changed nothing) or done, and the
 * sandbox runs the spec its row says it runs.
 */
describe.skipIf(!bwrap.available)(`concurrent changes of a sandbox${bwrap.reason}`, () => {
  let fx: VerbFixture;
  beforeAll(async () => {
    fx = await verbFixture(await openDatabase("pglite://memory"));
  });
  afterAll(async () => {
    await fx?.close();
  });

  /** The value of N in the sandbox's processes, as a command started now sees it. */
  async function runningN(sandboxId: string): Promise<string> {
    const sandbox = await getSandboxRow(fx.deps, P, sandboxId);
    const result = await execInSandbox(fx.deps, fx.actor, { command: 'echo "$N"', timeoutMs: 10_000, sandbox });
    return result.stdout.trim();
  }

  it("writes no revision for an update it refuses, and runs the revision it records", async () => {
    const row = await createSandbox(fx.deps, fx.actor, {
      projectId: P,
      name: "race",
      labels: {},
      env: { N: "0" },
      start: true,
    });
    // A workspace that takes a moment to archive: the restart's first step, after the revision is written.
    await execInSandbox(fx.deps, fx.actor, {
      command: "head -c 2000000 /dev/urandom > /workspace/blob",
      timeoutMs: 20_000,
      sandbox: row,
    });
    let revisions = 1;
    for (let round = 1; round <= 2; round++) {
      const first = updateSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, env: { N: `${round}.1` } });
      // The second comes once the first's revision is in, while the first restarts onto it.
      for (let i = 0; i < 5000 && (await getSandboxRow(fx.deps, P, row.id)).current_revision === revisions; i++) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const second = updateSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, env: { N: `${round}.2` } });
      const values = [`${round}.1`, `${round}.2`];
      const results = await Promise.allSettled([first, second]);
      const done = values.filter((_, i) => results[i]?.status === "fulfilled");
      for (const result of results) {
        if (result.status === "rejected") expect(result.reason).toMatchObject({ status: 409 });
      }
      revisions += done.length;
      const after = await getSandboxRow(fx.deps, P, row.id);
      expect(after.state).toBe("running");
      expect(after.current_revision, `round ${round}`).toBe(revisions);
      expect((await listRevisions(fx.deps, row.id)).length).toBe(revisions);
      expect(done, `round ${round}`).toContain(after.env.N);
      expect(await runningN(row.id), `round ${round}`).toBe(after.env.N);
    }
  }, 120_000);

  it("starts a sandbox on the revision an update racing the start recorded, or refuses the update", async () => {
    const row = await createSandbox(fx.deps, fx.actor, {
      projectId: P,
      name: "start-race",
      labels: {},
      env: { N: "0" },
      start: true,
    });
    for (let round = 1; round <= 3; round++) {
      await stopSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id });
      const [started, updated] = await Promise.allSettled([
        startSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id }),
        updateSandbox(fx.deps, fx.actor, { projectId: P, sandboxId: row.id, env: { N: `s${round}` } }),
      ]);
      expect(started.status).toBe("fulfilled");
      if (updated.status === "rejected") expect(updated.reason).toMatchObject({ status: 409 });
      const after = await getSandboxRow(fx.deps, P, row.id);
      expect(after.state).toBe("running");
      expect(await runningN(row.id), `round ${round}`).toBe(after.env.N);
    }
  });
});
