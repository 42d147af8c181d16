import { deleteSandboxTokenRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { getSandboxTokenRow, revokeSandboxToken } from "../../services/tokens.ts";
import { actorFor } from "../helpers.ts";

export function registerDeleteSandboxToken(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(deleteSandboxTokenRoute, async (c) => {
    const row = await getSandboxTokenRow(ctx, c.req.valid("param").id);
    const actor = await actorFor(ctx, c, "sandbox-tokens:manage", row.project_id);
    await revokeSandboxToken(ctx, actor, row);
    return c.body(null, 204);
  });
}
