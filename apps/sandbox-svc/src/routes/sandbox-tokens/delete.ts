import { deleteSandboxTokenRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { getSandboxTokenRow, revokeSandboxToken } from "../../services/tokens.ts";

export function registerDeleteSandboxToken(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(deleteSandboxTokenRoute, async (c) => {
    const row = await getSandboxTokenRow(ctx, c.req.valid("param").id);
    const caller = await authorize(c, ctx.authorizer, "sandbox-tokens:manage", {
      projectId: row.project_id,
      // Another organization's token is not found, in the words used for one that does not exist.
      resource: `Sandbox token ${row.id}`,
    });
    await revokeSandboxToken(ctx, caller, { token: row });
    return c.body(null, 204);
  });
}
