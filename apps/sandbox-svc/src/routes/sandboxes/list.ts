import { listSandboxesRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { listSandboxes } from "../../services/sandboxes.ts";

export function registerListSandboxes(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(listSandboxesRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId });
    const page = await listSandboxes(ctx, projectId, c.req.valid("query"));
    return c.json(
      {
        items: page.items.map((row) => toSandbox(row, ctx.config.ingressHost, ctx.driver)),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      },
      200,
    );
  });
}
