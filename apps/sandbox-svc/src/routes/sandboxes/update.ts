import { updateSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { updateSandbox } from "../../services/revisions.ts";

export function registerUpdateSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(updateSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    const { row, restarted } = await updateSandbox(ctx, caller, { projectId, sandboxId, ...c.req.valid("json") });
    return c.json({ ...toSandbox(row, ctx.config.ingressHost, ctx.driver), restarted }, 200);
  });
}
