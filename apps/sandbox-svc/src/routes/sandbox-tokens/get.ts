import { getSandboxTokenRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { getSandboxTokenRow, toSandboxToken } from "../../services/tokens.ts";
import { actorFor } from "../helpers.ts";

export function registerGetSandboxToken(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(getSandboxTokenRoute, async (c) => {
    const row = await getSandboxTokenRow(ctx, c.req.valid("param").id);
    await actorFor(ctx, c, "sandbox-tokens:manage", row.project_id);
    return c.json(toSandboxToken(row), 200);
  });
}
