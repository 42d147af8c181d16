import { AUDIT_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import type { RouteDeps } from "../deps.ts";

/**
 * Internal spend decision API (not under /v1; the gateway never routes here; only other services,
 * the inference proxy, decide about spend): replaces a hold with the call's actual cost once it is known.
 */
export function registerSettleSpend({ app, spend }: RouteDeps): void {
  app.openapi(internalRoute(R.settle), async (c) => c.json(await spend.settle(c.req.valid("json")), 200));
}
