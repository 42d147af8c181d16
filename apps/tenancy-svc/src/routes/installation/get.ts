import { getInstallationRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as installation from "../../services/installation.ts";

export function registerGetInstallation(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(getInstallationRoute, async (c) => c.json(await installation.getInstallation(ctx), 200));
}
