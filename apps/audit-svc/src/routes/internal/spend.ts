import { AUDIT_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import type { RouteDeps } from "../deps.ts";

/**
 * The internal spend decision API (not under /v1; the gateway never routes here). Only other
 * services (the inference proxy) decide about spend; no user token reaches it.
 */
export function registerSpendApi({ app, spend }: RouteDeps): void {
  app.openapi(internalRoute(R.reserve), async (c) => c.json(await spend.reserve(c.req.valid("json")), 200));
  app.openapi(internalRoute(R.settle), async (c) => c.json(await spend.settle(c.req.valid("json")), 200));
  app.openapi(internalRoute(R.release), async (c) => c.json(await spend.release(c.req.valid("json")), 200));
}
