import { getSandboxEffectivePolicyRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { effectivePolicy } from "../../services/effective-policy.ts";
import { querySandboxes } from "../../services/sandboxes.ts";

/** A project viewer reads any sandbox's effective policy; a sandbox token reads its own sandbox's. */
export function registerGetSandboxEffectivePolicy(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(getSandboxEffectivePolicyRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    // A sandbox token reads its own sandbox's (an agent asks what it may do); any other is invisible.
    const { orgId } = await authorize(c, ctx.authorizer, "sandboxes:read", { projectId, sandboxId });
    const [sandbox] = await querySandboxes(ctx, { orgId, projectId, sandboxId });
    if (!sandbox) throw notFound("Sandbox", sandboxId);
    return c.json(await effectivePolicy(ctx, sandbox), 200);
  });
}
