import { revokeApiTokenRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as tokens from "../../services/api-tokens.ts";
import { visibleToken } from "./access.ts";

export function registerRevokeApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(revokeApiTokenRoute, async (c) => {
    const { tokenId } = c.req.valid("param");
    const { caller } = await visibleToken(c, ctx, tokenId, { forChange: true });
    await tokens.revokeApiToken(ctx, caller, { tokenId });
    return c.body(null, 204);
  });
}
