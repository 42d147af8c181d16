import { getApiTokenRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { visibleToken } from "./access.ts";

export function registerGetApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getApiTokenRoute, async (c) => {
    const { token } = await visibleToken(c, ctx, c.req.valid("param").tokenId);
    return c.json(token, 200);
  });
}
