import { rollbackSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { rollbackSandbox } from "../../services/revisions.ts";

export function registerRollbackSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(rollbackSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    return c.json(
      toSandbox(
        await rollbackSandbox(ctx, caller, { projectId, sandboxId, ...c.req.valid("json") }),
        ctx.config.ingressHost,
        ctx.driver,
      ),
      200,
    );
  });
}
