import { startActivationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as installation from "../../services/installation.ts";
import { forwardedOrigin } from "../forwarded-origin.ts";

export function registerStartActivation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(startActivationRoute, async (c) =>
    c.json(await installation.startActivation(ctx, forwardedOrigin(c.req.raw.headers)), 201),
  );
}
