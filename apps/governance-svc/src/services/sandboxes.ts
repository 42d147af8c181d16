import { internalQuerySandboxesRoute, type SandboxSummary } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, servicePrincipal } from "@agentplane/service-kit";
import type { GovernanceContext } from "../context.ts";

/** Sandboxes as sandbox-svc describes them (its internal query API; governance never reads its tables). */
export async function querySandboxes(
  ctx: GovernanceContext,
  query: { orgId: string; projectId?: string; sandboxId?: string },
): Promise<SandboxSummary[]> {
  if (!ctx.sandboxes) {
    throw new ProblemError("service-unavailable", { detail: "The sandbox service is not configured (SANDBOX_URL)" });
  }
  const answer = await callInternal(ctx.sandboxes, internalQuerySandboxesRoute, {
    principal: servicePrincipal("governance"),
    body: query,
  });
  return answer.items;
}
