import { internalRecordEgressRefusalRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { recordEgressRefusalEvent } from "../../egress/facts.ts";

/**
 * A connection the cluster's egress proxy refused, recorded as `sandbox.egress_denied` through this
 * service's outbox (decision 0065); only the `egress` service may send it. 404 when the sandbox is unknown.
 */
export function registerInternalRecordEgressRefusal(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(internalRoute(internalRecordEgressRefusalRoute), async (c) => {
    if (!(await recordEgressRefusalEvent(ctx, c.req.valid("json")))) {
      throw new ProblemError("not-found", { detail: "No such sandbox" });
    }
    return c.json({ recorded: true as const }, 200);
  });
}
