import { internalSpendSettleRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";

/**
 * Internal spend decision API (not under /v1; the gateway never routes here; only other services,
 * the inference proxy, decide about spend): replaces a hold with the call's actual cost once it is known.
 */
export function registerInternalSpendSettle(app: ServiceApp, { spend }: AuditContext): void {
  app.openapi(internalRoute(internalSpendSettleRoute), async (c) =>
    c.json(await spend.settle(c.req.valid("json")), 200),
  );
}
