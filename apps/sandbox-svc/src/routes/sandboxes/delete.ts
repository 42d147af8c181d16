import { deleteSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { deleteSandbox } from "../../services/stop-delete.ts";

export function registerDeleteSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(deleteSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    for (const session of ctx.sessions.list(projectId)) {
      if (session.sandboxId === sandboxId) ctx.sessions.close(session);
    }
    await deleteSandbox(ctx, caller, { projectId, sandboxId });
    return c.body(null, 204);
  });
}
