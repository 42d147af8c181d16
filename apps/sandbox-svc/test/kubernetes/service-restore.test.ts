import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import type { Caller } from "@agentplane/service-kit";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSandbox } from "../../src/services/create.ts";
import { execInSandbox } from "../../src/services/exec.ts";
import { rollbackSandbox, updateSandbox } from "../../src/services/revisions.ts";
import { getSandboxRow, startSandbox } from "../../src/services/sandboxes.ts";
import { deleteSandbox, stopSandbox } from "../../src/services/stop-delete.ts";
import { archivesOf } from "../../src/services/workspace-archives.ts";
import { NS, startFakeKube } from "./fixture.ts";
import { replica } from "./replica.ts";

const P = "prj_restore";
const actor: Caller = { principal: { type: "user", id: "usr_restore" }, orgId: "org_restore" };
const postgres = (await databaseTargets()).find((t) => t.name === "postgres");

// The main process writes down the file as it found it when it started (whole, by a rename).
const RECORDS_AT_START = "cat file > .seen 2>&1; mv .seen .seen-at-start; exec sleep 60";

describe.skipIf(!postgres?.available)(`rollback to a tar revision on Kubernetes${postgres?.reason ?? ""}`, () => {
  let fake: FakeKubeApiServer;
  let database: Database;
  let cleanup: () => Promise<void>;
  let a: Awaited<ReturnType<typeof replica>>;
  beforeAll(async () => {
    fake = await startFakeKube();
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

  async function sandbox(name: string) {
    const created = await createSandbox(a.deps, actor, {
      projectId: P,
      name,
      labels: {},
      start: true,
      command: RECORDS_AT_START,
    });
    const run = async (command: string) =>
      execInSandbox(a.deps, actor, { command, timeoutMs: 10_000, sandbox: await getSandboxRow(a.deps, P, created.id) });
    const workspace = fake.claimDir(NS, `${created.slug}-workspace`);
    // What the main process of the Pod now running wrote (an archive may bring back an older one first).
    const seenAtStart = async (expected: string) =>
      vi.waitFor(() => expect(readFileSync(join(workspace, ".seen-at-start"), "utf8")).toBe(expected));
    const initSteps = () =>
      ((fake.store.get("/pods", NS, created.slug)?.spec?.initContainers ?? []) as { name: string }[]).map(
        (c) => c.name,
      );
    const podCreations = () => fake.requests.filter((r) => r === `POST /api/v1/namespaces/${NS}/pods`).length;
    return { created, run, workspace, seenAtStart, initSteps, podCreations };
  }

  it("restores a running sandbox's workspace before its main process starts, in one new Pod", async () => {
    const { created, run, seenAtStart, initSteps, podCreations } = await sandbox("running rollback");
    await run("echo one > file");
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    expect((await archivesOf(a.deps, created.id)).get(1)).toMatchObject({ method: "tar" });
    await run("echo two > file && echo extra > added");

    const before = podCreations();
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 });
    // One Pod for the restart, with the restore step; its main process found revision 1's file.
    expect(podCreations() - before).toBe(1);
    expect(initSteps()).toEqual(["restore"]);
    await seenAtStart("one\n");
    expect((await run("cat file; ls")).stdout).toBe("one\nfile\n");
    expect(await getSandboxRow(a.deps, P, created.id)).toMatchObject({
      state: "running",
      current_revision: 3,
      restore_revision: null,
    });
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("restores a stopped sandbox's workspace at its next start", async () => {
    const { created, run, workspace, seenAtStart, initSteps } = await sandbox("stopped rollback");
    await run("echo one > file");
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    await run("echo two > file");
    await stopSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });

    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 });
    // Stopped, the spec is back and the workspace is due at the next start.
    expect(await getSandboxRow(a.deps, P, created.id)).toMatchObject({
      state: "stopped",
      current_revision: 3,
      restore_revision: 1,
    });
    expect(readFileSync(join(workspace, "file"), "utf8")).toBe("two\n");
    // A change of spec while stopped keeps it due.
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "four" } });
    expect((await getSandboxRow(a.deps, P, created.id)).restore_revision).toBe(1);

    await startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    expect(initSteps()).toEqual(["restore"]);
    await seenAtStart("one\n");
    expect((await run('cat file; echo "$STAGE"')).stdout).toBe("one\nfour\n");
    expect((await getSandboxRow(a.deps, P, created.id)).restore_revision).toBeNull();

    // Restored once: the start after it is a plain one and keeps what the sandbox wrote since.
    await run("echo five > file");
    await stopSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    await startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    expect(initSteps()).toEqual([]);
    await seenAtStart("five\n");
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("fails the start of an archive that does not unpack, leaves the workspace, and does not try it again", async () => {
    const { created, run, workspace, seenAtStart, initSteps } = await sandbox("broken archive");
    await run("echo one > file");
    await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: "two" } });
    await run("echo two > file");
    await stopSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    // Revision 1's archive cut short, as one taken before its output had all arrived was.
    const where = { sandbox_id: created.id, revision: 1 };
    const { data } = await a.deps.db
      .selectFrom("workspace_archives")
      .select("data")
      .where("sandbox_id", "=", where.sandbox_id)
      .where("revision", "=", where.revision)
      .executeTakeFirstOrThrow();
    await a.deps.db
      .updateTable("workspace_archives")
      .set({ data: data.subarray(0, data.length - 30) } as never)
      .where("sandbox_id", "=", where.sandbox_id)
      .where("revision", "=", where.revision)
      .execute();
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 1 });

    await expect(startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id })).rejects.toMatchObject({
      detail: expect.stringContaining("the workspace of revision 1 was not restored"),
    });
    const failed = await getSandboxRow(a.deps, P, created.id);
    expect(failed).toMatchObject({ state: "failed", restore_revision: null });
    expect(failed.last_error).toMatch(
      /revision 1 was not restored \(the workspace was left as it was\): .*the archive did not unpack/s,
    );
    expect(readFileSync(join(workspace, "file"), "utf8")).toBe("two\n");

    // The next start is a plain one (no restore step) on the workspace the sandbox had.
    await startSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
    expect(initSteps()).toEqual([]);
    await seenAtStart("two\n");
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });

  it("keeps the archive a rollback restores even when it is older than the newest five", async () => {
    const { created, run, seenAtStart } = await sandbox("old archive");
    await run("echo one > file");
    for (const stage of ["2", "3", "4", "5", "6", "7"]) {
      await updateSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, env: { STAGE: stage } });
      await run(`echo ${stage} > file`);
    }
    // Revisions 1…6 were left, 2…6 are kept; revision 2's file says "2".
    expect([...(await archivesOf(a.deps, created.id)).keys()].sort()).toEqual([2, 3, 4, 5, 6]);
    await rollbackSandbox(a.deps, actor, { projectId: P, sandboxId: created.id, revision: 2 });
    // Revision 7's workspace was archived; revision 2's stayed for the restore.
    expect([...(await archivesOf(a.deps, created.id)).keys()].sort()).toEqual([2, 3, 4, 5, 6, 7]);
    await seenAtStart("2\n");
    await deleteSandbox(a.deps, actor, { projectId: P, sandboxId: created.id });
  });
});
