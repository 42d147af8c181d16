import { startSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { startSandbox } from "../../services/sandboxes.ts";

export function registerStartSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(startSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    return c.json(
      toSandbox(await startSandbox(ctx, caller, { projectId, sandboxId }), ctx.config.ingressHost, ctx.driver),
      200,
    );
  });
}
