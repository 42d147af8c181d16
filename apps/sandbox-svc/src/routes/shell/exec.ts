import { execShellRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { execInSandbox } from "../../services/exec.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";

export function registerExecShell(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(execShellRoute, async (c) => {
    const input = c.req.valid("json");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:exec", {
      projectId: input.projectId,
      sandboxId: input.sandboxId,
    });
    const row = await getSandboxRow(ctx, input.projectId, input.sandboxId);
    return c.json(await execInSandbox(ctx, caller, { ...input, sandbox: row }), 200);
  });
}
