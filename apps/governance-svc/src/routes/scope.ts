import type { Permission } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, requirePrincipal, type ServiceApp, type ServiceContext } from "@agentplane/service-kit";
import type { GovernanceContext } from "../context.ts";
import type { Caller, PolicyScope } from "../services/policies.ts";

export function callerOf(c: ServiceContext): Caller {
  return { principal: requirePrincipal(c), requestId: c.get("requestId") };
}

export async function orgScope(
  c: ServiceContext,
  ctx: GovernanceContext,
  permission: Permission,
  orgId: string,
): Promise<PolicyScope> {
  await authorize(c, ctx.authorizer, permission, { orgId });
  return { orgId };
}

export async function projectScope(
  c: ServiceContext,
  ctx: GovernanceContext,
  permission: Permission,
  projectId: string,
): Promise<PolicyScope & { projectId: string }> {
  const decision = await authorize(c, ctx.authorizer, permission, { projectId });
  if (!decision.orgId) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
  return { orgId: decision.orgId, projectId };
}
