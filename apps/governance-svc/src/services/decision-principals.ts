import { internalProjectPrincipalRoute, type PolicyDecisionPrincipal, type Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { type Caller, callInternal, servicePrincipal } from "@agentplane/service-kit";
import type { GovernanceContext } from "../context.ts";
import { querySandboxes } from "./sandboxes.ts";

const GOVERNANCE = servicePrincipal("governance");

/**
 * The principal a "would this be allowed?" question is about, as its enforcement points would
 * see it: a member or an API token as tenancy resolves them (restrictions included), a sandbox
 * as its egress proxy names it. One that is not of the caller's project answers 404.
 */
export async function decisionPrincipal(
  ctx: GovernanceContext,
  caller: Caller,
  input: { projectId: string; principal: PolicyDecisionPrincipal },
): Promise<Principal> {
  const { projectId, principal: ref } = input;
  if (ref.type === "sandbox") {
    const [sandbox] = await querySandboxes(ctx, { orgId: caller.orgId, projectId, sandboxId: ref.id });
    if (!sandbox) throw new ProblemError("not-found", { detail: `No sandbox ${ref.id} in project ${projectId}` });
    return {
      type: "sandbox",
      id: sandbox.id,
      displayName: sandbox.name,
      sandboxId: sandbox.id,
      projectId,
      orgId: caller.orgId,
    };
  }
  if (!ctx.tenancy) {
    throw new ProblemError("service-unavailable", { detail: "The tenancy service is not configured (TENANCY_URL)" });
  }
  const { principal } = await callInternal(ctx.tenancy, internalProjectPrincipalRoute, {
    principal: GOVERNANCE,
    params: { projectId },
    body: { type: ref.type, id: ref.id },
    requestId: caller.requestId,
  });
  return principal;
}
