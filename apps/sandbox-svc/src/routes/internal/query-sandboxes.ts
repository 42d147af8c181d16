import { internalQuerySandboxesRoute } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { querySandboxesOfOrg } from "../../services/org-sandboxes.ts";

/**
 * The sandboxes of an organization (optionally one project or one sandbox) for governance's
 * effective policy and drift audit; only service principals may ask. Env values never leave here.
 */
export function registerInternalQuerySandboxes(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(internalRoute(internalQuerySandboxesRoute), async (c) =>
    c.json(await querySandboxesOfOrg(ctx, c.req.valid("json")), 200),
  );
}
