import { runShellSessionCommandRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { runShellSessionCommand } from "../../services/shell-commands.ts";
import { actorFor } from "../helpers.ts";

export function registerRunShellSessionCommand(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(runShellSessionCommandRoute, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    const actor = await actorFor(ctx, c, "sandboxes:exec", projectId);
    const result = await runShellSessionCommand(ctx, ctx.sessions, actor, projectId, sessionId, c.req.valid("json"));
    return c.json(result, 200);
  });
}
