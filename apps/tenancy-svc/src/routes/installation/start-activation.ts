import { startActivation } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as installation from "../../services/installation.ts";

export function registerStartActivation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(startActivation, async (c) => c.json(await installation.startActivation(ctx), 201));
}
