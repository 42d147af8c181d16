// `running-sandboxes` on the kubernetes driver, with two replicas on one Postgres: the limit is
// the service's, so starts sent to both replicas at once still run no more than it allows.
import { DEFAULT_OBJECT_LIMITS } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import type { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxDeps } from "../../src/services/context.ts";
import { createSandbox } from "../../src/services/create.ts";
import { startSandbox } from "../../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../../src/services/stop-delete.ts";
import { NS, startFakeKube } from "./fixture.ts";
import { replica } from "./replica.ts";

const actor: Caller = { principal: { type: "user", id: "usr_kube" }, orgId: "org_kube_limits" };
const postgres = (await databaseTargets()).find((t) => t.name === "postgres");

describe.skipIf(!postgres?.available)(`running-sandboxes on the kubernetes driver${postgres?.reason ?? ""}`, () => {
  let fake: FakeKubeApiServer;
  let database: Database;
  let cleanup: () => Promise<void>;
  let replicas: Awaited<ReturnType<typeof replica>>[];
  let limited: SandboxDeps[];
  beforeAll(async () => {
    fake = await startFakeKube();
    ({ database, cleanup } = await (postgres as NonNullable<typeof postgres>).open());
    replicas = [await replica(database, fake), await replica(database, fake)];
    const objectLimits = { ...DEFAULT_OBJECT_LIMITS, "running-sandboxes": 2 };
    limited = replicas.map((r) => ({ ...r.deps, config: { ...r.deps.config, objectLimits } }));
  });
  afterAll(async () => {
    for (const r of replicas ?? []) await r.close();
    await cleanup?.();
    await fake?.close();
  });

  it("runs two of four started at once on two replicas; a stop lets a refused one start", async () => {
    const burst = await Promise.allSettled(
      [0, 1, 2, 3].map((i) =>
        createSandbox(limited[i % 2]!, actor, {
          projectId: `prj_kube_${i}`,
          name: `box-${i}`,
          labels: {},
          start: true,
        }),
      ),
    );
    const won = burst.flatMap((answer) => (answer.status === "fulfilled" ? [answer.value] : []));
    expect(won.map((row) => row.state)).toEqual(["running", "running"]);
    for (const lost of burst.filter((answer) => answer.status === "rejected")) {
      expect((lost.reason as ProblemError).slug).toBe("limit-exceeded");
      expect((lost.reason as ProblemError).extensions).toMatchObject({ kind: "running-sandboxes", limit: 2 });
    }
    expect(
      fake.store.list("/pods", NS).filter((pod) => won.some((row) => row.slug === pod.metadata.name)),
    ).toHaveLength(2);
    const rows = await limited[0]!.db.selectFrom("sandboxes").selectAll().where("org_id", "=", actor.orgId).execute();
    const refused = rows.filter((row) => row.state === "pending");
    expect(refused).toHaveLength(2);
    for (const row of refused) expect(fake.store.get("/pods", NS, row.slug)).toBeUndefined();

    await expect(
      startSandbox(limited[1]!, actor, { projectId: refused[0]!.project_id, sandboxId: refused[0]!.id }),
    ).rejects.toMatchObject({ status: 409, slug: "limit-exceeded" });
    await stopSandbox(limited[0]!, actor, { projectId: won[0]!.project_id, sandboxId: won[0]!.id });
    const started = await startSandbox(limited[1]!, actor, {
      projectId: refused[0]!.project_id,
      sandboxId: refused[0]!.id,
    });
    expect(started.state).toBe("running");
    for (const row of rows) await deleteSandbox(limited[0]!, actor, { projectId: row.project_id, sandboxId: row.id });
  }, 60_000);
});
