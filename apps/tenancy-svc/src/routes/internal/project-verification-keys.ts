import { internalProjectVerificationKeysRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { projectVerificationKeys } from "../../services/project-tokens.ts";

export function registerInternalProjectVerificationKeys(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalProjectVerificationKeysRoute), async (c) => {
    const { projectId } = c.req.valid("param");
    const found = await projectVerificationKeys(ctx.db, projectId);
    if (!found) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    return c.json(found, 200);
  });
}
