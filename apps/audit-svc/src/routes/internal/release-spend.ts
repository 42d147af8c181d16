import { internalSpendReleaseRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";

/**
 * Internal spend decision API (not under /v1; the gateway never routes here; only other services,
 * the inference proxy, decide about spend): drops a hold whose call did not run, returning its amount to the limits.
 */
export function registerInternalSpendRelease(app: ServiceApp, { spend }: AuditContext): void {
  app.openapi(internalRoute(internalSpendReleaseRoute), async (c) =>
    c.json(await spend.release(c.req.valid("json")), 200),
  );
}
