import type { SandboxState } from "@agentplane/contracts";
import { countRows, lockForTransaction } from "@agentplane/db";
import { enforceObjectLimit, limitExceeded, objectLimitLock, objectLimitsOr } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { SandboxDB } from "../db/schema.ts";
import type { SandboxDeps } from "./context.ts";

/**
 * The states that hold a slot of `running-sandboxes`. A stopping sandbox keeps its slot until its
 * processes are gone, so a restart (stopping, then starting) never gives it up to another start.
 */
export const RUNNING_STATES: SandboxState[] = ["starting", "running", "stopping"];

/** The organization a sandbox's starts count against (its project, for a sandbox of none). */
function runningHolder(row: { org_id: string | null; project_id: string }) {
  return row.org_id
    ? { holder: "organization" as const, holderId: row.org_id, column: "org_id" as const }
    : { holder: "project" as const, holderId: row.project_id, column: "project_id" as const };
}

async function countRunning(db: Kysely<SandboxDB>, row: { org_id: string | null; project_id: string }) {
  const { column, holderId } = runningHolder(row);
  return countRows(db.selectFrom("sandboxes").where(column, "=", holderId).where("state", "in", RUNNING_STATES));
}

/**
 * Refuses a create past its project's `sandboxes` limit (sandboxes being deleted no longer count)
 * and, for a create that starts, past its organization's `running-sandboxes` limit. In the
 * create's transaction, before its insert, in two statements whatever it checks (they run beside
 * the driver's start, on the embedded database's thread): the locks first, the project's then the
 * organization's (the order every transaction takes them in), then both counts, in a statement of
 * their own so that its snapshot is taken after the locks are held.
 */
export async function enforceCreateLimits(
  deps: SandboxDeps,
  trx: Kysely<SandboxDB>,
  row: { org_id: string | null; project_id: string; state: string },
): Promise<void> {
  const limits = objectLimitsOr(deps.config.objectLimits);
  const starting = row.state === "starting";
  const running = runningHolder(row);
  const locks = [objectLimitLock("sandboxes", row.project_id)];
  if (starting) locks.push(objectLimitLock("running-sandboxes", running.holderId));
  await lockForTransaction(trx, ...locks);
  const counts = await trx
    .selectNoFrom((eb) => [
      eb
        .selectFrom("sandboxes")
        .select(eb.fn.countAll<string>().as("n"))
        .where("project_id", "=", row.project_id)
        .where("state", "<>", "deleting")
        .as("sandboxes"),
      eb
        .selectFrom("sandboxes")
        .select(eb.fn.countAll<string>().as("n"))
        .where(running.column, "=", running.holderId)
        .where("state", "in", RUNNING_STATES)
        .as("running"),
    ])
    .executeTakeFirstOrThrow();
  if (Number(counts.sandboxes) >= limits.sandboxes) throw limitExceeded("sandboxes", limits.sandboxes, "project");
  const runningLimit = limits["running-sandboxes"];
  if (starting && Number(counts.running) >= runningLimit) {
    throw limitExceeded("running-sandboxes", runningLimit, running.holder);
  }
}

/**
 * Refuses a start past its organization's `running-sandboxes` limit. In the transaction that
 * moves the sandbox to `starting`, before that write: starts of one organization count one after
 * the other, so a burst cannot overshoot. A restart keeps the slot it holds and needs no check.
 */
export async function enforceRunningCount(
  deps: SandboxDeps,
  trx: Kysely<SandboxDB>,
  row: { org_id: string | null; project_id: string },
) {
  const { holder, holderId } = runningHolder(row);
  await enforceObjectLimit(trx, objectLimitsOr(deps.config.objectLimits), {
    kind: "running-sandboxes",
    holder,
    holderId,
    count: () => countRunning(trx, row),
  });
}
