import { deleteShellSessionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";

export function registerDeleteShellSession(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(deleteShellSessionRoute, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:exec", { projectId });
    ctx.sessions.close(ctx.sessions.get(projectId, sessionId));
    return c.body(null, 204);
  });
}
