import { type SandboxSpec, SandboxSpecSchema, type UpdateSandboxRequest } from "@agentplane/contracts";
import { withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { z } from "zod";
import type { SandboxDB } from "../db/schema.ts";
import { recordSandboxEvent, type SandboxDeps } from "./context.ts";
import { jsonb, type SandboxRow, specColumns, specOf } from "./mapping.ts";
import { enforceAdmission } from "./policy.ts";
import { bootSandbox, getSandboxRow, type SandboxRef, setState } from "./sandboxes.ts";
import { archiveMethod, keepWorkspace, restoreSnapshotBeforeStart } from "./workspace-archives.ts";

// A sandbox's spec changes as numbered revisions: an update or a rollback writes the next one and
// makes it current (a running sandbox restarts onto it); name and labels are metadata, no revision.

type UpdateInput = z.infer<typeof UpdateSandboxRequest> & SandboxRef;

/** Writes a new revision with `spec` and makes it current; a running sandbox restarts onto it. */
async function applyRevision(
  deps: SandboxDeps,
  caller: Caller,
  row: SandboxRow,
  spec: SandboxSpec,
  reason: string | null,
  meta: { name?: string; labels?: Record<string, string> },
  record: (trx: Kysely<SandboxDB>, revision: number) => Promise<void>,
  /** Rollback: the revision whose kept workspace replaces the current one. */
  restoreFrom?: number,
): Promise<number> {
  if (row.state === "deleting" || row.state === "stopping" || row.state === "starting") {
    throw new ProblemError("invalid-transition", { detail: `Sandbox ${row.id} is ${row.state}` });
  }
  const revision = row.current_revision + 1;
  // A rollback brings back the workspace its revision kept: a volume snapshot replaces the volume
  // before the start below; a tar archive is put back by the next start (this one if running).
  const kept = restoreFrom === undefined ? undefined : await archiveMethod(deps, row.id, restoreFrom);
  const running = row.state === "running";
  await withDomainEvents(deps, async (trx) => {
    // Written only over the revision and the state it was read with: a change that loses a race
    // writes nothing. A running sandbox is claimed for its restart in the same write (stopping),
    // so no other change or start can come between the revision and the restart onto it.
    const updated = await trx
      .updateTable("sandboxes")
      .set({
        ...specColumns(spec),
        ...(running ? { state: "stopping" } : {}),
        ...(kept === "tar" ? { restore_revision: restoreFrom } : {}),
        ...(kept === "volume-snapshot" ? { restore_revision: null } : {}),
        ...(meta.name ? { name: meta.name } : {}),
        ...(meta.labels ? { labels: jsonb(meta.labels) } : {}),
        current_revision: revision,
        updated_at: new Date(),
      } as never)
      .where("id", "=", row.id)
      .where("current_revision", "=", row.current_revision)
      .where("state", "=", row.state)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0)
      throw new ProblemError("conflict", { detail: "Concurrent change; retry" });
    await trx
      .insertInto("revisions")
      .values({
        sandbox_id: row.id,
        revision,
        spec: jsonb(spec),
        author_type: caller.principal.type,
        author_id: caller.principal.id,
        author_name: caller.principal.displayName ?? null,
        reason,
        created_at: new Date(),
      } as never)
      .execute();
    await record(trx, revision);
  });
  // A rollback's volume snapshot replaces the workspace while no Pod uses it.
  const restoreSnapshot = async () => {
    if (restoreFrom === undefined || kept !== "volume-snapshot") return false;
    return restoreSnapshotBeforeStart(deps, row, restoreFrom).catch((err: Error) => {
      deps.logger.warn({ err, sandboxId: row.id, revision: restoreFrom }, "workspace snapshot not restored");
      return false;
    });
  };
  if (!running) await restoreSnapshot();
  if (running) {
    // A restart keeps the sandbox's slot of `running-sandboxes` throughout (stopping counts as
    // running there): no start of the organization can take it in between, and none is refused.
    // The workspace as the revision being left has it (its processes still run), so a rollback
    // to it can bring it back.
    await keepWorkspace(deps, row, row.current_revision, restoreFrom);
    await deps.driver.stop(row.id);
    await restoreSnapshot();
    await setState(deps, row.id, "starting");
    await bootSandbox(deps, await getSandboxRow(deps, row.project_id, row.id));
  }
  return revision;
}

export async function updateSandbox(deps: SandboxDeps, caller: Caller, input: UpdateInput) {
  const { projectId, sandboxId } = input;
  const row = await getSandboxRow(deps, projectId, sandboxId);
  const current = specOf(row);
  const next: SandboxSpec = {
    image: input.image ?? current.image,
    command: input.command === undefined ? current.command : input.command,
    env: input.env ?? current.env,
    resources: input.resources ?? current.resources,
    ports: input.ports ?? current.ports,
    idleTimeoutSeconds: input.idleTimeoutSeconds ?? current.idleTimeoutSeconds,
  };
  deps.driver.validateImage(next.image);
  await enforceAdmission(deps, caller, "sandbox:update", { ...row, labels: input.labels ?? row.labels }, next);
  const specChanged = JSON.stringify(next) !== JSON.stringify(current);
  if (!specChanged) {
    // Name and labels are metadata: no revision, no restart.
    if (input.name !== undefined || input.labels !== undefined) {
      await deps.db
        .updateTable("sandboxes")
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.labels !== undefined ? { labels: jsonb(input.labels) } : {}),
          updated_at: new Date(),
        } as never)
        .where("id", "=", sandboxId)
        .execute();
    }
    return { row: await getSandboxRow(deps, projectId, sandboxId), restarted: false };
  }
  const meta = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.labels !== undefined ? { labels: input.labels } : {}),
  };
  await applyRevision(deps, caller, row, next, input.reason ?? null, meta, (trx, revision) =>
    recordSandboxEvent(deps, trx, caller, {
      action: "sandbox.updated",
      projectId,
      orgId: row.org_id,
      targetType: "sandbox",
      targetId: sandboxId,
      details: { revision, restarted: row.state === "running" },
    }),
  );
  return { row: await getSandboxRow(deps, projectId, sandboxId), restarted: row.state === "running" };
}

export async function listRevisions(deps: SandboxDeps, sandboxId: string) {
  return deps.db
    .selectFrom("revisions")
    .selectAll()
    .where("sandbox_id", "=", sandboxId)
    .orderBy("revision", "desc")
    .execute();
}

export async function rollbackSandbox(
  deps: SandboxDeps,
  caller: Caller,
  { projectId, sandboxId, revision: target, reason }: SandboxRef & { revision: number; reason?: string | undefined },
) {
  const row = await getSandboxRow(deps, projectId, sandboxId);
  const old = await deps.db
    .selectFrom("revisions")
    .selectAll()
    .where("sandbox_id", "=", sandboxId)
    .where("revision", "=", target)
    .executeTakeFirst();
  if (!old) throw new ProblemError("not-found", { detail: `Revision ${target} of sandbox ${sandboxId} was not found` });
  const spec = SandboxSpecSchema.parse(old.spec);
  // A rollback admits the old spec again under today's policies.
  await enforceAdmission(deps, caller, "sandbox:update", row, spec);
  await applyRevision(
    deps,
    caller,
    row,
    spec,
    reason ?? `rollback to revision ${target}`,
    {},
    (trx, revision) =>
      recordSandboxEvent(deps, trx, caller, {
        action: "sandbox.rolled_back",
        projectId,
        orgId: row.org_id,
        targetType: "sandbox",
        targetId: sandboxId,
        details: { fromRevision: row.current_revision, toRevision: target, newRevision: revision },
      }),
    target,
  );
  return getSandboxRow(deps, projectId, sandboxId);
}
