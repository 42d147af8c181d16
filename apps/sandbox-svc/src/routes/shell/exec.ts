import { execShellRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { execInSandbox } from "../../services/exec.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { stage } from "../../stages.ts";

export function registerExecShell(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(execShellRoute, async (c) => {
    stage("exec: handler");
    const input = c.req.valid("json");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:exec", {
      projectId: input.projectId,
      sandboxId: input.sandboxId,
    });
    stage("exec: authorized");
    const row = await getSandboxRow(ctx, input.projectId, input.sandboxId);
    stage("exec: row read");
    const answer = c.json(await execInSandbox(ctx, caller, { ...input, sandbox: row }), 200);
    stage("exec: answered");
    return answer;
  });
}
