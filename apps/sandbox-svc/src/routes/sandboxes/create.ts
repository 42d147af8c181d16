import { createSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { createSandbox } from "../../services/sandboxes.ts";

export function registerCreateSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(createSandboxRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    const row = await createSandbox(ctx, caller, { projectId, ...c.req.valid("json") });
    return c.json(toSandbox(row, ctx.config.ingressHost), 201);
  });
}
