import { execShellRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { execInSandbox } from "../../services/exec.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { actorFor } from "../helpers.ts";

export function registerExecShell(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(execShellRoute, async (c) => {
    const input = c.req.valid("json");
    const actor = await actorFor(ctx, c, "sandboxes:exec", input.projectId, input.sandboxId);
    const row = await getSandboxRow(ctx, input.projectId, input.sandboxId);
    return c.json(await execInSandbox(ctx, actor, row, input), 200);
  });
}
