import { internalResolveSandboxTokenRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { resolveSandboxToken } from "../../services/tokens.ts";

/** The gateway resolves `apsb_…` bearer tokens here; only service principals may ask. */
export function registerInternalResolveSandboxToken(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(internalRoute(internalResolveSandboxTokenRoute), async (c) =>
    c.json({ principal: await resolveSandboxToken(ctx, c.req.valid("json").token) }, 200),
  );
}
