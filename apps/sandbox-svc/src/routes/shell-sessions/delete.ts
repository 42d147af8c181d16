import { deleteShellSessionRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { actorFor } from "../helpers.ts";

export function registerDeleteShellSession(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(deleteShellSessionRoute, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await actorFor(ctx, c, "sandboxes:exec", projectId);
    ctx.sessions.close(ctx.sessions.get(projectId, sessionId));
    return c.body(null, 204);
  });
}
