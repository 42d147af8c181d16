import type { SandboxListQuery, SandboxState } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { type Kysely, sql } from "kysely";
import type { z } from "zod";
import type { SandboxDB } from "../db/schema.ts";
import { StartWithdrawnError, WorkspaceRestoreError } from "../driver/types.ts";
import { stage } from "../stages.ts";
import { recordSandboxEvent, relayShortly, type SandboxDeps } from "./context.ts";
import { enforceRunningCount } from "./limits.ts";
import { jsonb, runtimeSpec, type SandboxRow, specOf } from "./mapping.ts";
import { enforceAdmission } from "./policy.ts";
import { mintPlatformToken, type NewToken, newPlatformToken, writePlatformToken } from "./tokens.ts";
import { restoreIntoRunning, settleInterruptedRestore, tarArchive } from "./workspace-archives.ts";

/** A sandbox of a project, as a verb's input names it. */
export interface SandboxRef {
  projectId: string;
  sandboxId: string;
}
type ListQuery = z.infer<typeof SandboxListQuery>;

export async function getSandboxRow(deps: SandboxDeps, projectId: string, sandboxId: string): Promise<SandboxRow> {
  const row = await deps.db
    .selectFrom("sandboxes")
    .selectAll()
    .where("id", "=", sandboxId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Sandbox ${sandboxId} was not found` });
  return row;
}

export async function listSandboxes(deps: SandboxDeps, projectId: string, query: ListQuery) {
  let q = deps.db.selectFrom("sandboxes").selectAll().where("project_id", "=", projectId);
  if (query.state) q = q.where("state", "=", query.state);
  if (query.cursor) q = q.where("id", "<", query.cursor);
  for (const term of (query.labelSelector ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)) {
    const [key, value] = term.split("=", 2) as [string, string | undefined];
    if (!/^[a-zA-Z0-9._/-]+$/.test(key)) {
      throw new ProblemError("validation-failed", {
        detail: "Bad label selector",
        errors: [{ pointer: "/query/labelSelector", message: `bad label key ${key}` }],
      });
    }
    // jsonb containment / key existence, which both Postgres and PGlite index and evaluate alike.
    q =
      value === undefined
        ? q.where(sql<boolean>`labels ? ${key}`)
        : q.where((eb) => eb(eb.ref("labels"), "@>", jsonb({ [key]: value }) as never));
  }
  const rows = await q
    .orderBy("id", "desc")
    .limit(query.limit + 1)
    .execute();
  const items = rows.slice(0, query.limit);
  return { items, nextCursor: rows.length > query.limit ? items.at(-1)?.id : undefined };
}

/**
 * Moves the state only from one of `from`; a concurrent change loses with a 409. Answers the row
 * as it moved it (a spec changed since `row` was read included).
 */
export async function transition(
  deps: Pick<SandboxDeps, "db">,
  row: SandboxRow,
  from: SandboxState[],
  to: SandboxState,
  extra: Record<string, unknown> = {},
): Promise<SandboxRow> {
  const moved = await deps.db
    .updateTable("sandboxes")
    .set({ state: to, updated_at: new Date(), ...extra } as never)
    .where("id", "=", row.id)
    .where("state", "in", from)
    .returningAll()
    .executeTakeFirst();
  if (!moved) throw cannotGo(row, to);
  return moved;
}

function cannotGo(row: SandboxRow, to: SandboxState): ProblemError {
  return new ProblemError("invalid-transition", { detail: `Sandbox ${row.id} cannot go to ${to} from ${row.state}` });
}

/** The states a start moves a sandbox out of. */
const STARTABLE: SandboxState[] = ["pending", "stopped", "failed"];

export async function setState(
  deps: SandboxDeps,
  id: string,
  state: SandboxState,
  extra: Record<string, unknown> = {},
) {
  await deps.db
    .updateTable("sandboxes")
    .set({ state, updated_at: new Date(), ...extra } as never)
    .where("id", "=", id)
    .execute();
}

export async function startSandbox(deps: SandboxDeps, caller: Caller, { projectId, sandboxId }: SandboxRef) {
  const row = await getSandboxRow(deps, projectId, sandboxId);
  if (row.state === "running") return row;
  if (!STARTABLE.includes(row.state as SandboxState)) throw cannotGo(row, "starting");
  deps.driver.checkAvailable();
  await enforceAdmission(deps, caller, "sandbox:start", row, specOf(row));
  const platform = newPlatformToken(row);
  // Counted and moved to `starting` under the organization's lock, in one transaction.
  // The sandbox boots the spec its row has as it moves to `starting` (an update since the read
  // above included; one after it is refused while the sandbox starts).
  const starting = await deps.db.transaction().execute(async (trx) => {
    await enforceRunningCount(deps, trx, row);
    return transition({ db: trx }, row, STARTABLE, "starting", {
      last_error: null,
      platform_token_id: platform.row.id,
    });
  });
  return launchSandbox(deps, caller, starting, { platform, written: false, replaces: row.platform_token_id });
}

/** Boots a sandbox a start moved to `starting` and records the start; answers the row as it ends. */
export async function launchSandbox(
  deps: SandboxDeps,
  caller: Caller,
  row: SandboxRow,
  token: BootToken,
): Promise<SandboxRow> {
  const { project_id: projectId, id: sandboxId } = row;
  const written = await bootSandbox(
    deps,
    row,
    (trx, running) =>
      recordSandboxEvent(deps, trx, caller, {
        action: running ? "sandbox.started" : "sandbox.start_failed",
        projectId,
        orgId: row.org_id,
        targetType: "sandbox",
        targetId: sandboxId,
        outcome: running ? "success" : "error",
        details: { revision: row.current_revision },
      }),
    token,
  );
  const after = { ...row, ...written } as SandboxRow;
  if (after.state === "stopping" || after.state === "stopped" || after.state === "deleting") {
    throw new ProblemError("invalid-transition", {
      detail: `Sandbox ${sandboxId} was stopped while it started: it is ${after.state}`,
    });
  }
  if (after.state !== "running") {
    throw new ProblemError("internal-error", { detail: `Sandbox ${sandboxId} failed to start: ${after.last_error}` });
  }
  return after;
}

/**
 * The platform token a start already recorded in the sandbox's row (`platform_token_id`):
 * `written` when its row is in too, or the transaction writing both (a create's), which the boot
 * waits for before it records the outcome; else written by the boot, revoking the one it `replaces`.
 */
export interface BootToken {
  platform: NewToken;
  written: boolean | Promise<unknown>;
  replaces?: string | null;
  /**
   * The start was begun before it was decided (a create's): settles once it is admitted and
   * counted. The driver runs nothing of the sandbox's until then, and undoes its start when it
   * rejects (and `written` rejects with the reason).
   */
  admitted?: Promise<void>;
}

/** What a start writes beside the state it ends in, in the same transaction (its audit record). */
export type StartRecord = (trx: Kysely<SandboxDB>, running: boolean) => Promise<void>;

/**
 * Starts the driver's side of a sandbox in state `starting`, with a fresh platform token in its
 * environment, then writes the state it ended in (`running` or `failed`) and `record` in one
 * transaction. When that transaction fails the start is undone: the process is stopped, the
 * sandbox marked failed, and the error thrown.
 */
export async function bootSandbox(
  deps: SandboxDeps,
  row: SandboxRow,
  record?: StartRecord,
  prepared?: BootToken,
): Promise<Partial<SandboxRow>> {
  let failure: string | undefined;
  /** The archive was put back and did not go in: the next start does not try it again (a rollback can). */
  let restoreFailed = false;
  // A rollback's tar archive goes back in: before the main process where the driver can (an init
  // step on Kubernetes), else right after the start, over exec.
  const restore = row.restore_revision ?? undefined;
  const archive = restore === undefined ? undefined : await tarArchive(deps, row.id, restore);
  if (restore !== undefined && !archive) {
    deps.logger.warn({ sandboxId: row.id, revision: restore }, "the archived workspace to restore is gone");
  }
  const beforeStart = archive !== undefined && deps.driver.restoresWorkspaceAtStart === true;
  try {
    const env: Record<string, string> = {};
    if (prepared?.written === false) await writePlatformToken(deps.db, prepared.platform, prepared.replaces ?? null);
    env.AGENTPLANE_TOKEN = prepared ? prepared.platform.token : await mintPlatformToken(deps, row);
    // What the agent runtime's sandbox switch (and any client) needs to call the platform about itself.
    env.AGENTPLANE_PROJECT_ID = row.project_id;
    env.AGENTPLANE_SANDBOX_ID = row.id;
    if (deps.config.apiUrl) env.AGENTPLANE_API_URL = deps.config.apiUrl;
    stage("boot: token ready");
    await deps.driver.start(
      { ...runtimeSpec(row, env), ...(beforeStart ? { workspaceArchive: archive } : {}) },
      prepared?.admitted ? { admitted: prepared.admitted } : undefined,
    );
    stage("boot: driver started");
    if (!archive && (await deps.driver.hasSwapLeftovers?.(row.id))) {
      // A restore was killed in the middle: the workspace goes back as it was before it, or as it
      // made it once its swap was done (a restore settles this itself, first).
      await settleInterruptedRestore(deps, row.id).then(
        () => deps.logger.info({ sandboxId: row.id }, "an interrupted workspace restore was settled"),
        (err: Error) =>
          deps.logger.warn({ err, sandboxId: row.id }, "an interrupted workspace restore was not settled"),
      );
    }
    if (archive && !beforeStart) {
      await restoreIntoRunning(deps, row.id, archive).catch(async (err: Error) => {
        await deps.driver.stop(row.id).catch(() => {});
        throw new WorkspaceRestoreError(err.message);
      });
    }
    if (archive) deps.logger.info({ sandboxId: row.id, revision: restore, beforeStart }, "workspace restored");
  } catch (err) {
    // A start withdrawn before it was admitted did not fail: `written` says why it was refused.
    if (!(err instanceof StartWithdrawnError)) deps.logger.warn({ err, sandboxId: row.id }, "sandbox failed to start");
    failure = (err as Error).message;
    if (err instanceof WorkspaceRestoreError) {
      // On every driver a restore that fails leaves the workspace as it was: the start fails,
      // saying so, rather than run the rolled-back revision on a workspace it does not have.
      restoreFailed = true;
      failure = `the workspace of revision ${restore} was not restored (the workspace was left as it was): ${failure}`;
    }
    failure = failure.slice(0, 2000);
  }
  if (prepared?.written instanceof Promise) {
    // The sandbox's row could not be written: nothing of it may stay behind.
    try {
      await prepared.written;
    } catch (err) {
      if (failure === undefined) await deps.driver.stop(row.id).catch(() => {});
      await deps.driver.removeWorkspace(row.id).catch(() => {});
      throw err;
    }
  }
  stage("boot: row written");
  const now = new Date();
  const failedWith = (message: string): Partial<SandboxRow> => ({
    state: "failed",
    last_error: message.slice(0, 2000),
    ...(restoreFailed ? { restore_revision: null } : {}),
    updated_at: now,
  });
  let written: Partial<SandboxRow> =
    failure === undefined
      ? {
          state: "running",
          started_at: now,
          last_activity_at: now,
          updated_at: now,
          ...(restore !== undefined ? { restore_revision: null } : {}),
        }
      : failedWith(failure);
  try {
    await deps.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable("sandboxes")
        .set(written as never)
        .where("id", "=", row.id)
        .where("state", "=", "starting")
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) === 0) {
        // A stop or delete took the sandbox over while it started (the driver stops it for them):
        // the start is recorded as it went, and answered with the state they left.
        const now = await trx.selectFrom("sandboxes").select("state").where("id", "=", row.id).executeTakeFirst();
        await record?.(trx, written.state === "running");
        written = { state: now?.state ?? "deleting" };
        return;
      }
      // A driver may answer the start before all of the sandbox is up (the local driver's egress
      // relay): a failure since then is recorded here. Asked after the update, so one reported
      // later finds the row running (its event marks it failed).
      const late = failure === undefined ? deps.driver.failedAfterStart?.(row.id) : undefined;
      if (late !== undefined) {
        written = failedWith(late);
        await trx
          .updateTable("sandboxes")
          .set(written as never)
          .where("id", "=", row.id)
          .execute();
      }
      await record?.(trx, written.state === "running");
    });
    stage("boot: start recorded");
    // Published a little later, not in the round right after the commit: that round's statements
    // would run just as the client's next request (its first exec) arrives, and delay it.
    relayShortly(deps);
    return written;
  } catch (err) {
    if (failure === undefined) await deps.driver.stop(row.id).catch(() => {});
    await setState(deps, row.id, "failed", { last_error: (err as Error).message.slice(0, 2000) }).catch(() => {});
    // What a create wrote with the row (left to this transaction's relay) goes out now all the same.
    deps.outbox.relaySoon();
    throw err;
  }
}

/** The driver saw the main process end without being asked: record it. */
export async function recordUnexpectedExit(deps: SandboxDeps, sandboxId: string, phase: string, message?: string) {
  await deps.db
    .updateTable("sandboxes")
    .set({ state: phase === "failed" ? "failed" : "stopped", last_error: message ?? null, updated_at: new Date() })
    .where("id", "=", sandboxId)
    .where("state", "=", "running")
    .execute();
}

export async function touchActivity(deps: SandboxDeps, sandboxId: string): Promise<void> {
  await deps.db.updateTable("sandboxes").set({ last_activity_at: new Date() }).where("id", "=", sandboxId).execute();
}
