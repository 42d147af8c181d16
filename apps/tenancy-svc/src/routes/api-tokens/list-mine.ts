import { listMyApiTokensRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { listMyApiTokens } from "../../services/personal-tokens.ts";

export function registerListMyApiTokens(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(listMyApiTokensRoute, async (c) => {
    return c.json(await listMyApiTokens(ctx, requesterOf(c), c.req.valid("query")), 200);
  });
}
