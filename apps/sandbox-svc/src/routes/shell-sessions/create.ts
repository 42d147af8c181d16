import { createShellSessionRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { openShellSession, toShellSession } from "../../services/shell-commands.ts";

export function registerCreateShellSession(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(createShellSessionRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:exec", { projectId });
    const session = await openShellSession(ctx, caller, { projectId, sandboxId: c.req.valid("json").sandboxId });
    return c.json(toShellSession(session, ctx.sessions.idleMs), 201);
  });
}
