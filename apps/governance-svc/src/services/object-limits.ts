import { countRows } from "@agentplane/db";
import { type Caller, enforceObjectLimit } from "@agentplane/service-kit";
import type { Transaction } from "kysely";
import type { GovernanceContext } from "../context.ts";
import type { GovernanceDb } from "../db/schema.ts";

/**
 * Refuses a policy, binding or credential past its holder's limit: a project's own objects count
 * against the project, an organization's (no project) against the organization. Each kind is
 * stored in the table of its name. In the create's transaction, before its insert.
 */
export async function enforceScopeLimit(
  ctx: GovernanceContext,
  trx: Transaction<GovernanceDb>,
  caller: Caller,
  kind: "policies" | "bindings" | "credentials",
): Promise<void> {
  await enforceObjectLimit(trx, ctx.objectLimits, {
    kind,
    holder: caller.projectId ? "project" : "organization",
    holderId: caller.projectId ?? caller.orgId,
    count: async () => {
      const q = trx.selectFrom(kind).where("org_id", "=", caller.orgId);
      return countRows(
        caller.projectId ? q.where("project_id", "=", caller.projectId) : q.where("project_id", "is", null),
      );
    },
  });
}
