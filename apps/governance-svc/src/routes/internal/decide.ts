import { GOVERNANCE_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import { decide } from "../../services/decisions.ts";
import type { RouteDeps } from "../scope.ts";

/** The one decision endpoint every enforcement point asks (service identities only). */
export function registerDecide({ app, ctx }: RouteDeps): void {
  app.openapi(internalRoute(R.decide), async (c) =>
    c.json(await decide(ctx, c.req.valid("json"), c.get("requestId")), 200),
  );
}
