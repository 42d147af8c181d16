import { deleteSandboxRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { deleteSandbox } from "../../services/sandboxes.ts";
import { actorFor } from "../helpers.ts";

export function registerDeleteSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(deleteSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(ctx, c, "sandboxes:write", projectId);
    for (const session of ctx.sessions.list(projectId)) {
      if (session.sandboxId === sandboxId) ctx.sessions.close(session);
    }
    await deleteSandbox(ctx, actor, projectId, sandboxId);
    return c.body(null, 204);
  });
}
