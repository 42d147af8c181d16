import { internalSpendOpenRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";

/**
 * Internal spend decision API (not under /v1; the gateway never routes here; only other services,
 * the inference proxy, decide about spend): records a batch of calls already forwarded in scopes no
 * limit applied to, so a crash still settles them at their estimate, and says where a limit applies now.
 */
export function registerInternalSpendOpen(app: ServiceApp, { spend }: AuditContext): void {
  app.openapi(internalRoute(internalSpendOpenRoute), async (c) => c.json(await spend.open(c.req.valid("json")), 200));
}
