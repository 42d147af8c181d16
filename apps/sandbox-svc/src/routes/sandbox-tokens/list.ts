import { listSandboxTokensRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { listSandboxTokens, toSandboxToken } from "../../services/tokens.ts";

export function registerListSandboxTokens(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(listSandboxTokensRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await authorize(c, ctx.authorizer, "sandbox-tokens:manage", { projectId });
    return c.json({ items: (await listSandboxTokens(ctx, projectId)).map(toSandboxToken) }, 200);
  });
}
