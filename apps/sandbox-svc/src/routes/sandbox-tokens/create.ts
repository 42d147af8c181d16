import { createSandboxTokenRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { createSandboxToken, toSandboxToken } from "../../services/tokens.ts";

/** Creates a sandbox token; its secret is in this response only. */
export function registerCreateSandboxToken(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(createSandboxTokenRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandbox-tokens:manage", { projectId });
    const input = c.req.valid("json");
    const sandbox = await getSandboxRow(ctx, projectId, input.sandboxId);
    const { row, token } = await createSandboxToken(ctx, caller, { ...input, sandbox });
    return c.json({ ...toSandboxToken(row), token }, 201);
  });
}
