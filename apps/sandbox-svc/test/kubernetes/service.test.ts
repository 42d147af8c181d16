import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { MemoryBus } from "@agentplane/events";
import type { ProblemError } from "@agentplane/problem-details";
import { type Caller, generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandboxService } from "../../src/app.ts";
import { configFromEnv } from "../../src/config.ts";
import { createSandbox } from "../../src/services/create.ts";
import { execInSandbox } from "../../src/services/exec.ts";
import { collectGarbage } from "../../src/services/lifecycle.ts";
import { listRevisions, rollbackSandbox, updateSandbox } from "../../src/services/revisions.ts";
import { getSandboxRow, startSandbox } from "../../src/services/sandboxes.ts";
import { ShellSessions } from "../../src/services/shell-sessions.ts";
import { deleteSandbox, stopSandbox } from "../../src/services/stop-delete.ts";
import { archivesOf } from "../../src/services/workspace-archives.ts";
import { kubeDriver, NS, startFakeKube } from "./fixture.ts";
import { replica } from "./replica.ts";

const P = "prj_kube";
const actor: Caller = { principal: { type: "user", id: "usr_kube" }, orgId: "org_kube" };

// Two replicas share Postgres, as in a deployment.
const postgres = (await databaseTargets()).find((t) => t.name === "postgres");

describe.skipIf(!postgres?.available)(`sandbox-svc on the kubernetes driver${postgres?.reason ?? ""}`, () => {
  let fake: FakeKubeApiServer;
  let database: Database;
  let cleanup: () => Promise<void>;
  let a: Awaited<ReturnType<typeof replica>>;
  let b: Awaited<ReturnType<typeof replica>>;
  beforeAll(async () => {
    fake = await startFakeKube();
    const opened = await (postgres as NonNullable<typeof postgres>).open();
    database = opened.database;
    cleanup = opened.cleanup;
    a = await replica(database, fake);
    b = await replica(database, fake);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cleanup?.();
    await fake?.close();
  });

  it("runs the verbs on either replica: create and start on one, exec and stop on the other", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "two replicas", labels: {}, start: true });
    expect(created.state).toBe("running");
    const pod = fake.store.get("/pods", NS, created.slug);
    expect(pod?.metadata.labels?.["agentplane.dev/org-id"]).toBe("org_kube");
    // The sandbox's platform token is in its Secret, referenced by the Pod, never in the Pod spec.
    const containers = pod?.spec?.containers as { env: { name: string }[]; envFrom: unknown[] }[];
    expect(containers[0]?.env.map((e) => e.name)).not.toContain("AGENTPLANE_TOKEN");
    expect(containers[0]?.envFrom).toEqual([{ secretRef: { name: `${created.slug}-env` } }]);
    const secret = fake.store.get("/secrets", NS, `${created.slug}-env`);
    expect(Object.keys((secret?.data ?? {}) as object)).toContain("AGENTPLANE_TOKEN");
    const row = await getSandboxRow(b.deps, P, created.id);
    const result = await execInSandbox(b.deps, actor, {
      command: "echo from-b; exit 2",
      timeoutMs: 5000,
      sandbox: row,
    });
    expect(result).toMatchObject({ exitCode: 2, stdout: "from-b\n" });
    await stopSandbox(b.deps, actor, { projectId: P, sandboxId: created.id });
    expect(fake.store.get("/pods", NS, created.slug)).toBeUndefined();
    // Neither replica took the stop for a crash.
    await new Promise((r) => setTimeout(r, 200));
    expect((await getSandboxRow(a.deps, P, created.id)).state).toBe("stopped");
    await startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    expect(fake.store.get("/persistentvolumeclaims", NS, `${created.slug}-workspace`)).toBeUndefined();
  });

  it("archives the workspace a revision leaves (tar over pods/exec) and a rollback restores it", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "revisions", labels: {}, start: true });
    const run = async (command: string) =>
      execInSandbox(a.deps, actor, { command, timeoutMs: 10_000, sandbox: await getSandboxRow(a.deps, P, created.id) });
    await run("mkdir -p src && echo one > src/file && echo keep > notes");
    // Revision 2 restarts the sandbox: the workspace of revision 1 is archived first.
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    await run("echo two > src/file && rm notes && echo new > added");
    expect((await run("cat src/file; ls")).stdout).toBe("two\nadded\nsrc\n");
    const archives = await archivesOf(a.deps, created.id);
    expect(archives.get(1)).toMatchObject({ method: "tar" });
    expect(archives.get(1)?.sizeBytes).toBeGreaterThan(0);

    // On the other replica: revision 3 is revision 1's spec and workspace (revision 2's is archived).
    await rollbackSandbox(b.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 });
    const row = await getSandboxRow(a.deps, P, created.id);
    expect(row).toMatchObject({ state: "running", current_revision: 3 });
    expect((await run('cat src/file notes; ls; echo "$STAGE"')).stdout).toBe("one\nkeep\nnotes\nsrc\n\n");
    expect([...(await archivesOf(a.deps, created.id)).keys()].sort()).toEqual([1, 2]);
    expect((await listRevisions(a.deps, created.id)).map((r) => r.revision)).toEqual([3, 2, 1]);
    // Only the newest archives stay.
    for (const stage of ["4", "5", "6", "7"])
      await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: stage } });
    expect([...(await archivesOf(a.deps, created.id)).keys()].sort()).toEqual([2, 3, 4, 5, 6]);
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("keeps a shell session's working directory and variables between commands", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "session", labels: {}, start: true });
    const sessions = new ShellSessions(a.deps);
    const session = await sessions.open(P, created.id);
    await sessions.run(session, "mkdir -p sub && cd sub && export KEPT=yes", 5000);
    const result = await sessions.run(session, 'basename "$PWD"; echo $KEPT', 5000);
    expect(result).toMatchObject({ exitCode: 0, stdout: "sub\nyes\n" });
    sessions.closeAll();
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("records a main process that exits, and stops idle sandboxes", async () => {
    const crashing = await createSandbox(a.deps, actor, {
      projectId: P,
      name: "crash",
      labels: {},
      start: true,
      command: "sleep 0.3; exit 9",
    });
    const idle = await createSandbox(a.deps, actor, {
      projectId: P,
      name: "idle",
      labels: {},
      start: true,
      idleTimeoutSeconds: 1,
    });
    await vi.waitFor(async () => {
      const row = await getSandboxRow(a.deps, P, crashing.id);
      expect(row.state).toBe("failed");
      expect(row.last_error).toBe("main process exited (code 9, Error)");
    });
    await vi.waitFor(async () => expect((await getSandboxRow(a.deps, P, idle.id)).state).toBe("stopped"), {
      timeout: 5000,
    });
    expect(fake.store.get("/pods", NS, idle.slug)).toBeUndefined();
    expect(fake.store.get("/persistentvolumeclaims", NS, `${idle.slug}-workspace`)).toBeDefined();
  });

  it("shows the scheduler's reason as lastError while starting, and fails the start with it", async () => {
    fake.unschedulable = "0/2 nodes are available: 2 Insufficient cpu.";
    try {
      const created = await createSandbox(a.deps, actor, { projectId: P, name: "pending", labels: {}, start: false });
      const start = startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id }).catch((e: Error) => e);
      await vi.waitFor(async () => {
        const row = await getSandboxRow(a.deps, P, created.id);
        expect(row).toMatchObject({
          state: "starting",
          last_error: "Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.",
        });
      });
      expect(((await start) as Error).message).toContain("was not ready within 2 s: Unschedulable");
      expect((await getSandboxRow(a.deps, P, created.id)).state).toBe("failed");
    } finally {
      fake.unschedulable = undefined;
    }
  });

  it("reports driver: down with the API server's message and answers 503 with Retry-After", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "outage", labels: {}, start: false });
    await fake.down();
    try {
      await vi.waitFor(async () => expect((await a.service.readiness?.())?.checks.driver).toBe("down"), {
        timeout: 5000,
      });
      // The watch is cut first; then reconnecting is refused.
      await vi.waitFor(
        async () => {
          const refused = (await startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id }).catch(
            (e) => e,
          )) as ProblemError;
          expect(refused.status).toBe(503);
          expect(refused.headers["retry-after"]).toBe("5");
          expect(refused.message).toBe("The Kubernetes API server is unavailable: fetch failed (ECONNREFUSED)");
        },
        { timeout: 5000 },
      );
    } finally {
      await fake.up();
    }
    await vi.waitFor(async () => expect((await a.service.readiness?.())?.checks.driver).toBe("up"), {
      timeout: 10_000,
    });
    expect((await startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id })).state).toBe("running");
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("names the missing RBAC permission when the service account lacks one", async () => {
    fake.denials.push({ verb: "create", resource: "pods/exec" });
    const driver = kubeDriver(fake);
    try {
      await vi.waitFor(
        () => {
          expect(() => driver.checkAvailable()).toThrow(
            'The Kubernetes API server is unavailable: RBAC: cannot create pods/exec in the namespace "agentplane-sandboxes"',
          );
        },
        { timeout: 5000 },
      );
    } finally {
      fake.denials.length = 0;
      await driver.close();
    }
    fake.denials.push({ verb: "list", resource: "pods" });
    const listless = kubeDriver(fake);
    try {
      await vi.waitFor(
        () => expect(() => listless.checkAvailable()).toThrow(/403 pods is forbidden: .* cannot list resource "pods"/),
        {
          timeout: 5000,
        },
      );
    } finally {
      fake.denials.length = 0;
      await listless.close();
    }
  });

  it("is chosen by SANDBOX_DRIVER=kubernetes and finds the API server through KUBECONFIG", async () => {
    expect(() => configFromEnv({ SANDBOX_DRIVER: "docker" })).toThrow(/SANDBOX_DRIVER/);
    const previous = process.env.KUBECONFIG;
    process.env.KUBECONFIG = fake.kubeconfigFile(NS);
    const bus = new MemoryBus();
    try {
      const service = await createSandboxService({
        database,
        bus,
        keys: await generateInternalKeys(),
        logger: silentLogger(),
        authorizer: { check: () => Promise.reject(new Error("unused")) },
        config: configFromEnv({ SANDBOX_DRIVER: "kubernetes", SANDBOX_K8S_NAMESPACE: NS }, { dataDir: "/nonexistent" }),
      });
      expect(service.driver.describe()).toMatchObject({ driver: "kubernetes", namespace: NS, server: fake.url });
      await vi.waitFor(async () => expect(await service.readiness?.()).toMatchObject({ checks: { driver: "up" } }));
      await service.close();
    } finally {
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
      await bus.close();
    }
  });

  it("lets one replica, the lease holder, remove the Pod and claim of a sandbox whose row is gone", async () => {
    const kept = await createSandbox(a.deps, actor, { projectId: P, name: "kept", labels: {}, start: true });
    const orphan = await createSandbox(a.deps, actor, { projectId: P, name: "orphan", labels: {}, start: true });
    // As if its row had been deleted while the API server was unreachable.
    await a.deps.db.deleteFrom("sandboxes").where("id", "=", orphan.id).execute();
    const first = await collectGarbage(a.deps);
    const second = await collectGarbage(b.deps);
    expect([first, second]).toEqual([[orphan.id], []]);
    expect(
      fake.store.get("coordination.k8s.io/leases", NS, "agentplane-sandbox-gc")?.spec?.holderIdentity,
    ).toBeTruthy();
    await vi.waitFor(() => expect(fake.store.get("/pods", NS, orphan.slug)).toBeUndefined());
    expect(fake.store.get("/persistentvolumeclaims", NS, `${orphan.slug}-workspace`)).toBeUndefined();
    expect(fake.store.get("/pods", NS, kept.slug)).toBeDefined();
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: kept.id });
  });

  it("starts while the API server is unreachable, reporting driver: down, and recovers", async () => {
    const running = await createSandbox(a.deps, actor, { projectId: P, name: "survivor", labels: {}, start: true });
    await fake.down();
    let c: Awaited<ReturnType<typeof replica>> | undefined;
    try {
      c = await replica(database, fake);
      await vi.waitFor(async () => expect((await c?.service.readiness?.())?.checks.driver).toBe("down"), {
        timeout: 10_000,
      });
    } finally {
      await fake.up();
    }
    await vi.waitFor(async () => expect((await c?.service.readiness?.())?.checks.driver).toBe("up"), {
      timeout: 10_000,
    });
    const row = await getSandboxRow(a.deps, P, running.id);
    expect(row.state).toBe("running");
    expect((await execInSandbox(c.deps, actor, { command: "echo back", timeoutMs: 5000, sandbox: row })).stdout).toBe(
      "back\n",
    );
    await c.close();
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: running.id });
  });

  it("answers a stop or delete the API server refuses with a 502 naming it, and marks the sandbox failed", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "refused", labels: {}, start: true });
    fake.denials.push({ verb: "delete", resource: "pods" });
    try {
      for (const verb of [stopSandbox, deleteSandbox]) {
        const err = (await verb(a.deps, actor, { projectId: P, sandboxId: created.id }).catch(
          (e) => e,
        )) as ProblemError;
        expect(err.status, verb.name).toBe(502);
        expect(err.detail).toMatch(/Kubernetes API server.*403.*It is marked failed; try again/);
        expect((await getSandboxRow(a.deps, P, created.id)).state).toBe("failed");
      }
    } finally {
      fake.denials.length = 0;
    }
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });
});
