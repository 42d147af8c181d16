import { listSandboxTokensRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { listSandboxTokens, toSandboxToken } from "../../services/tokens.ts";
import { actorFor } from "../helpers.ts";

export function registerListSandboxTokens(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(listSandboxTokensRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(ctx, c, "sandbox-tokens:manage", projectId);
    return c.json({ items: (await listSandboxTokens(ctx, projectId)).map(toSandboxToken) }, 200);
  });
}
