import { internalGovernanceMetricsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { internalRoute } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";

/** Allows are counted rather than audited one by one; this replica's counts since it started. */
export function registerInternalGovernanceMetrics(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(internalRoute(internalGovernanceMetricsRoute), async (c) => {
    const { credentialResolutions, ...decisions } = ctx.counters;
    return c.json({ decisions, credentialResolutions }, 200);
  });
}
