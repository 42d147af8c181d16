import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { execInSandbox } from "../../services/exec.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerExecShell(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.execShell, async (c) => {
    const input = c.req.valid("json");
    const actor = await actorFor(deps, c, "sandboxes:exec", input.projectId);
    const row = await getSandboxRow(deps, input.projectId, input.sandboxId);
    return c.json(await execInSandbox(deps, actor, row, input), 200);
  });
}
