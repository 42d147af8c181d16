import { rotateProjectKeysRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import * as projects from "../../services/projects.ts";

export function registerRotateProjectKeys(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(rotateProjectKeysRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "project:keys:rotate", { projectId });
    const result = await projects.rotateProjectKeys(ctx, caller);
    return c.json(
      {
        projectId,
        kid: result.kid,
        previousKid: result.previousKid,
        previousPublishedUntil: result.previousPublishedUntil.toISOString(),
      },
      200,
    );
  });
}
