import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import type { Caller } from "@agentplane/service-kit";
import { type FakeKubeApiServer, validateKubeObject } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../src/services/create.ts";
import { execInSandbox } from "../../src/services/exec.ts";
import { rollbackSandbox, updateSandbox } from "../../src/services/revisions.ts";
import { getSandboxRow } from "../../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../../src/services/stop-delete.ts";
import { archivesOf } from "../../src/services/workspace-archives.ts";
import { NS, startFakeKube } from "./fixture.ts";
import { replica } from "./replica.ts";

const P = "prj_snap";
const actor: Caller = { principal: { type: "user", id: "usr_snap" }, orgId: "org_snap" };
const SNAPSHOTS = "snapshot.storage.k8s.io/volumesnapshots";
const postgres = (await databaseTargets()).find((t) => t.name === "postgres");

describe.skipIf(!postgres?.available)(`workspace revisions as VolumeSnapshots${postgres?.reason ?? ""}`, () => {
  let fake: FakeKubeApiServer;
  let database: Database;
  let cleanup: () => Promise<void>;
  let a: Awaited<ReturnType<typeof replica>>;
  beforeAll(async () => {
    fake = await startFakeKube();
    // The cluster offers snapshots: a default VolumeSnapshotClass.
    fake.store.create("snapshot.storage.k8s.io/volumesnapshotclasses", undefined, {
      apiVersion: "snapshot.storage.k8s.io/v1",
      kind: "VolumeSnapshotClass",
      metadata: { name: "csi-snapshots", annotations: { "snapshot.storage.kubernetes.io/is-default-class": "true" } },
      driver: "csi.example.com",
      deletionPolicy: "Delete",
    } as never);
    const opened = await (postgres as NonNullable<typeof postgres>).open();
    database = opened.database;
    cleanup = opened.cleanup;
    a = await replica(database, fake);
  });
  afterAll(async () => {
    await a?.close();
    await cleanup?.();
    await fake?.close();
  });

  it("snapshots the workspace a revision leaves and restores it into a new claim, running or stopped", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "snapshots", labels: {}, start: true });
    const run = async (command: string) =>
      execInSandbox(a.deps, actor, { command, timeoutMs: 10_000, sandbox: await getSandboxRow(a.deps, P, created.id) });
    const claim = () => fake.store.get("/persistentvolumeclaims", NS, `${created.slug}-workspace`);
    await run("echo one > file");
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    // Revision 1's workspace is a VolumeSnapshot of the claim, labelled with the sandbox, not owned by the claim.
    const snapshot = fake.store.get(SNAPSHOTS, NS, `${created.slug}-r1`);
    expect(snapshot?.spec).toEqual({
      volumeSnapshotClassName: "csi-snapshots",
      source: { persistentVolumeClaimName: `${created.slug}-workspace` },
    });
    expect(snapshot?.metadata.labels?.["agentplane.dev/sandbox-id"]).toBe(created.id);
    expect(snapshot?.metadata.ownerReferences ?? []).toEqual([]);
    expect((await archivesOf(a.deps, created.id)).get(1)).toEqual({ method: "volume-snapshot", sizeBytes: 0 });

    await run("echo two > file && echo extra > added");
    const firstClaim = claim()?.metadata.uid;
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 });
    // A new claim, provisioned from the snapshot, mounted by the new Pod.
    expect(claim()?.metadata.uid).not.toBe(firstClaim);
    expect(claim()?.spec?.dataSource).toEqual({
      apiGroup: "snapshot.storage.k8s.io",
      kind: "VolumeSnapshot",
      name: `${created.slug}-r1`,
    });
    expect((await getSandboxRow(a.deps, P, created.id)).state).toBe("running");
    expect((await run("cat file; ls")).stdout).toBe("one\nfile\n");
    expect(() => validateKubeObject(claim() as never)).not.toThrow();
    // Its NetworkPolicy and Secret belong to the new claim (the old one's were removed with it).
    const owner = claim()?.metadata.uid;
    expect(
      fake.store.get("networking.k8s.io/networkpolicies", NS, created.slug)?.metadata.ownerReferences?.[0]?.uid,
    ).toBe(owner);
    expect(fake.store.get("/secrets", NS, `${created.slug}-env`)?.metadata.ownerReferences?.[0]?.uid).toBe(owner);

    // A stopped sandbox's rollback restores its workspace too: revision 2's snapshot ("two").
    await stopSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 2 });
    const dir = fake.claimDir(NS, `${created.slug}-workspace`);
    expect(readFileSync(join(dir, "file"), "utf8")).toBe("two\n");

    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    expect(fake.store.list(SNAPSHOTS, NS).filter((s) => s.metadata.name.startsWith(created.slug))).toEqual([]);
  });

  it("never takes another sandbox's VolumeSnapshot for its own when the name is taken", async () => {
    // A snapshot left by a deleted sandbox whose slug is used again (its deletion held by a
    // finalizer, say): `<slug>-r1` exists, labelled with the other sandbox. Its data is not ours.
    fake.store.create(SNAPSHOTS, NS, {
      apiVersion: "snapshot.storage.k8s.io/v1",
      kind: "VolumeSnapshot",
      metadata: {
        name: "reused-r1",
        labels: { "agentplane.dev/sandbox-id": "sbx_other", "agentplane.dev/revision": "1" },
      },
      spec: { volumeSnapshotClassName: "csi-snapshots", source: { persistentVolumeClaimName: "reused-workspace" } },
    } as never);
    const created = await createSandbox(a.deps, actor, {
      projectId: P,
      name: "reused",
      slug: "reused",
      labels: {},
      start: true,
    });
    const run = async (command: string) =>
      execInSandbox(a.deps, actor, { command, timeoutMs: 10_000, sandbox: await getSandboxRow(a.deps, P, created.id) });
    await run("echo mine > file");
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    // Revision 1 is kept another way (a tar archive), never as the other sandbox's snapshot.
    expect((await archivesOf(a.deps, created.id)).get(1)?.method).toBe("tar");
    expect(fake.store.get(SNAPSHOTS, NS, "reused-r1")?.metadata.labels?.["agentplane.dev/sandbox-id"]).toBe(
      "sbx_other",
    );
    await run("echo changed > file");
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 });
    expect((await run("cat file")).stdout).toBe("mine\n");
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    // The other sandbox's snapshot is not ours to delete either.
    expect(fake.store.get(SNAPSHOTS, NS, "reused-r1")).toBeDefined();
  });

  it("neither adopts nor deletes an object of the namespace its slug happens to name", async () => {
    const POLICIES = "networking.k8s.io/networkpolicies";
    // The chart's default for the sandbox namespace: nothing in, nothing out.
    fake.store.create(POLICIES, NS, {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "default-deny" },
      spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
    } as never);
    const guard = () => fake.store.get(POLICIES, NS, "default-deny");
    const uid = guard()?.metadata.uid;
    await createSandbox(a.deps, actor, {
      projectId: P,
      name: "default deny",
      slug: "default-deny",
      labels: {},
      start: true,
    }).catch(() => {});
    const row = await a.deps.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("slug", "=", "default-deny")
      .executeTakeFirst();
    // The start fails, naming the object that holds the name; the namespace's policy is untouched.
    expect(row?.state).toBe("failed");
    expect(row?.last_error).toContain("NetworkPolicy default-deny exists and is not this sandbox's");
    expect(guard()?.metadata.uid).toBe(uid);
    expect(guard()?.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    if (row) await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: row.id });
    expect(guard()?.metadata.uid).toBe(uid);

    // A restore removes the policy and Secret the old claim owns, not others of the same names.
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "named", labels: {}, start: true });
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    await stopSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    fake.store.remove(POLICIES, NS, created.slug);
    fake.store.create(POLICIES, NS, {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: created.slug },
      spec: { podSelector: {}, policyTypes: ["Egress"] },
    } as never);
    const foreign = fake.store.get(POLICIES, NS, created.slug)?.metadata.uid;
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 }).catch(() => {});
    expect(fake.store.get(POLICIES, NS, created.slug)?.metadata.uid).toBe(foreign);
    fake.store.remove(POLICIES, NS, created.slug);
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("keeps the newest five VolumeSnapshots and the one a rollback restores, deleting older ones", async () => {
    const created = await createSandbox(a.deps, actor, { projectId: P, name: "pruned", labels: {}, start: true });
    const run = async (command: string) =>
      execInSandbox(a.deps, actor, { command, timeoutMs: 10_000, sandbox: await getSandboxRow(a.deps, P, created.id) });
    const snapshots = () =>
      fake.store
        .list(SNAPSHOTS, NS)
        .filter((s) => s.metadata.labels?.["agentplane.dev/sandbox-id"] === created.id)
        .map((s) => s.metadata.name)
        .sort();
    const names = (revisions: number[]) => revisions.map((r) => `${created.slug}-r${r}`).sort();
    const archived = async () => [...(await archivesOf(a.deps, created.id)).keys()].sort((x, y) => x - y);
    await run("echo 1 > file");
    for (const stage of [2, 3, 4, 5, 6, 7]) {
      await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: String(stage) } });
      await run(`echo ${stage} > file`);
    }
    // Revisions 1…6 were snapshotted; revision 1's went when revision 6's was taken.
    expect(snapshots()).toEqual(names([2, 3, 4, 5, 6]));
    expect(fake.store.get(SNAPSHOTS, NS, `${created.slug}-r6`)?.metadata.labels?.["agentplane.dev/revision"]).toBe("6");
    expect(existsSync(fake.snapshotDir(NS, `${created.slug}-r1`))).toBe(false);
    expect(await archived()).toEqual([2, 3, 4, 5, 6]);

    // A rollback to the oldest kept: revision 7's snapshot is taken, revision 2's stays to be restored.
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 2 });
    expect(snapshots()).toEqual(names([2, 3, 4, 5, 6, 7]));
    expect((await run("cat file")).stdout).toBe("2\n");
    expect(await archived()).toEqual([2, 3, 4, 5, 6, 7]);
    // The next change goes back to the newest five.
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "9" } });
    expect(snapshots()).toEqual(names([4, 5, 6, 7, 8]));
    expect(await archived()).toEqual([4, 5, 6, 7, 8]);
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    expect(snapshots()).toEqual([]);
  });
});
