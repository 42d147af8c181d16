import { SANDBOX_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import { resolveSandboxToken } from "../../services/tokens.ts";
import type { RouteDeps } from "../helpers.ts";

/** The gateway resolves `apsb_…` bearer tokens here; only service principals may ask. */
export function registerResolveSandboxToken(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(internalRoute(R.resolveSandboxToken), async (c) =>
    c.json({ principal: await resolveSandboxToken(deps, c.req.valid("json").token) }, 200),
  );
}
