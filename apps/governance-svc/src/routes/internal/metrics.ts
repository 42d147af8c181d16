import { GOVERNANCE_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import type { RouteDeps } from "../scope.ts";

/** Allows are counted rather than audited one by one; this replica's counts since it started. */
export function registerDecisionMetrics({ app, ctx }: RouteDeps): void {
  app.openapi(internalRoute(R.metrics), async (c) => {
    const { credentialResolutions, ...decisions } = ctx.counters;
    return c.json({ decisions, credentialResolutions }, 200);
  });
}
