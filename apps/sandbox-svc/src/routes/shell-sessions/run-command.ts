import { runShellSessionCommandRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { runShellSessionCommand } from "../../services/shell-commands.ts";

export function registerRunShellSessionCommand(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(runShellSessionCommandRoute, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:exec", { projectId });
    const result = await runShellSessionCommand(ctx, caller, { projectId, sessionId, ...c.req.valid("json") });
    return c.json(result, 200);
  });
}
