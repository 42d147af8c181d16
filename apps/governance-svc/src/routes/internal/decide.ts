import { internalDecideRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { internalRoute } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { decide } from "../../services/decisions.ts";

/** The one decision endpoint every enforcement point asks (service identities only). */
export function registerInternalDecide(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(internalRoute(internalDecideRoute), async (c) =>
    c.json(await decide(ctx, c.req.valid("json"), c.get("requestId")), 200),
  );
}
