import { QuerySandboxesRequest, SANDBOX_INTERNAL } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { querySandboxesOfOrg } from "../../services/org-sandboxes.ts";
import type { RouteDeps } from "../helpers.ts";

/**
 * The sandboxes of an organization (optionally one project or one sandbox) for governance's
 * effective policy and drift audit; only service principals may ask. Env values never leave here.
 */
export function registerQuerySandboxes(app: ServiceApp, deps: RouteDeps): void {
  app.post(SANDBOX_INTERNAL.querySandboxes, async (c) => {
    if (requirePrincipal(c).type !== "service") {
      throw new ProblemError("forbidden", { detail: "Internal endpoint for services" });
    }
    const parsed = QuerySandboxesRequest.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      throw new ProblemError("validation-failed", {
        detail: "Expected {orgId, projectId?, sandboxId?}",
        errors: parsed.error.issues.map((i) => ({ pointer: `/body/${i.path.join("/")}`, message: i.message })),
      });
    }
    return c.json(await querySandboxesOfOrg(deps, parsed.data), 200);
  });
}
