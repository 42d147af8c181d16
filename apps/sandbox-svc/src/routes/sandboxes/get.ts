import { getSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";

export function registerGetSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(getSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId, sandboxId });
    return c.json(toSandbox(await getSandboxRow(ctx, projectId, sandboxId), ctx.config.ingressHost, ctx.driver), 200);
  });
}
