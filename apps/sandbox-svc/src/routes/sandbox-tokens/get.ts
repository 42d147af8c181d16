import { getSandboxTokenRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { getSandboxTokenRow, toSandboxToken } from "../../services/tokens.ts";

export function registerGetSandboxToken(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(getSandboxTokenRoute, async (c) => {
    const row = await getSandboxTokenRow(ctx, c.req.valid("param").id);
    await authorize(c, ctx.authorizer, "sandbox-tokens:manage", {
      projectId: row.project_id,
      // Another organization's token is not found, in the words used for one that does not exist.
      resource: `Sandbox token ${row.id}`,
    });
    return c.json(toSandboxToken(row), 200);
  });
}
