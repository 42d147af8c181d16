import type { SandboxState } from "@agentplane/contracts";
import { enforceObjectLimit, limitExceeded, objectLimitsOr } from "@agentplane/service-kit";
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
  const { n } = await db
    .selectFrom("sandboxes")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where(column, "=", holderId)
    .where("state", "in", RUNNING_STATES)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * Refuses a create past its project's `sandboxes` limit (sandboxes being deleted no longer
 * count). In the create's transaction, before its insert.
 */
export async function enforceSandboxCount(deps: SandboxDeps, trx: Kysely<SandboxDB>, projectId: string) {
  await enforceObjectLimit(trx, objectLimitsOr(deps.config.objectLimits), {
    kind: "sandboxes",
    holder: "project",
    holderId: projectId,
    count: async () => {
      const { n } = await trx
        .selectFrom("sandboxes")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("project_id", "=", projectId)
        .where("state", "<>", "deleting")
        .executeTakeFirstOrThrow();
      return Number(n);
    },
  });
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

/**
 * The same question without the lock, before a create's start launches anything: an organization
 * at its limit boots no process only to stop it again. The locked check still decides.
 */
export async function refuseStartAtLimit(deps: SandboxDeps, row: { org_id: string | null; project_id: string }) {
  const limit = objectLimitsOr(deps.config.objectLimits)["running-sandboxes"];
  if ((await countRunning(deps.db, row)) >= limit) {
    throw limitExceeded("running-sandboxes", limit, runningHolder(row).holder);
  }
}
