import { getShellSessionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toShellSession } from "../../services/shell-commands.ts";

export function registerGetShellSession(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(getShellSessionRoute, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId });
    return c.json(toShellSession(ctx.sessions.get(projectId, sessionId), ctx.sessions.idleMs), 200);
  });
}
