import { SANDBOX_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import { querySandboxesOfOrg } from "../../services/org-sandboxes.ts";
import type { RouteDeps } from "../helpers.ts";

/**
 * The sandboxes of an organization (optionally one project or one sandbox) for governance's
 * effective policy and drift audit; only service principals may ask. Env values never leave here.
 */
export function registerQuerySandboxes(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(internalRoute(R.querySandboxes), async (c) =>
    c.json(await querySandboxesOfOrg(deps, c.req.valid("json")), 200),
  );
}
