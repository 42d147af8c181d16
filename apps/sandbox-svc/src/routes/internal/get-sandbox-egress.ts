import { internalGetSandboxEgressRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { readEgressFacts } from "../../egress/facts.ts";

/**
 * A sandbox's organization, project and labels for the cluster's egress proxy, which holds no
 * database (decision 0065); only the `egress` service may ask. 404 when unknown.
 */
export function registerInternalGetSandboxEgress(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(internalRoute(internalGetSandboxEgressRoute), async (c) => {
    const facts = await readEgressFacts(ctx, c.req.valid("param").sandboxId);
    if (!facts) throw new ProblemError("not-found", { detail: "No such sandbox" });
    return c.json(facts, 200);
  });
}
