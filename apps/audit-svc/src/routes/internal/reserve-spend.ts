import { internalSpendReserveRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";

/**
 * Internal spend decision API (not under /v1; the gateway never routes here; only other services,
 * the inference proxy, decide about spend): holds an estimated cost against the limits that apply before a call runs.
 */
export function registerInternalSpendReserve(app: ServiceApp, { spend }: AuditContext): void {
  app.openapi(internalRoute(internalSpendReserveRoute), async (c) =>
    c.json(await spend.reserve(c.req.valid("json")), 200),
  );
}
