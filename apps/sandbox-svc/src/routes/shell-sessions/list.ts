import { listShellSessionsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toShellSession } from "../../services/shell-commands.ts";

export function registerListShellSessions(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(listShellSessionsRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId });
    const items = ctx.sessions.list(projectId).map((s) => toShellSession(s, ctx.sessions.idleMs));
    return c.json({ items }, 200);
  });
}
