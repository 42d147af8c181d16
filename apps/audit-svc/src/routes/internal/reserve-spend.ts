import { AUDIT_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import type { RouteDeps } from "../deps.ts";

/**
 * Internal spend decision API (not under /v1; the gateway never routes here; only other services,
 * the inference proxy, decide about spend): holds an estimated cost against the limits that apply before a call runs.
 */
export function registerReserveSpend({ app, spend }: RouteDeps): void {
  app.openapi(internalRoute(R.reserve), async (c) => c.json(await spend.reserve(c.req.valid("json")), 200));
}
