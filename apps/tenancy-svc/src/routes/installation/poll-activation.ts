import { pollActivationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as installation from "../../services/installation.ts";

export function registerPollActivation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(pollActivationRoute, async (c) => {
    const result = await installation.pollActivation(ctx, c.req.valid("param").sessionId);
    // The token is a secret: never keep this answer in a cache.
    c.header("cache-control", "no-store");
    return c.json(result, 200);
  });
}
