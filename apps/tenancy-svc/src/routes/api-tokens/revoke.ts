import { revokeApiTokenRoute } from "@agentplane/contracts";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as tokens from "../../services/api-tokens.ts";
import { visibleToken } from "./access.ts";

export function registerRevokeApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(revokeApiTokenRoute, async (c) => {
    const token = await visibleToken(c, ctx, c.req.valid("param").tokenId, { forChange: true });
    await tokens.revokeApiToken(ctx, requirePrincipal(c), token, c.get("requestId"));
    return c.body(null, 204);
  });
}
