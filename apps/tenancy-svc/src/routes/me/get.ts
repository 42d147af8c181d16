import { getMeRoute } from "@agentplane/contracts";
import { requesterOf, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { getMe } from "../../services/me.ts";

export function registerGetMe(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getMeRoute, async (c) => c.json(await getMe(ctx, requesterOf(c)), 200));
}
