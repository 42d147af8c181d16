import { stopSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { stopSandbox } from "../../services/stop-delete.ts";

export function registerStopSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(stopSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    return c.json(
      toSandbox(await stopSandbox(ctx, caller, { projectId, sandboxId }), ctx.config.ingressHost, ctx.driver),
      200,
    );
  });
}
