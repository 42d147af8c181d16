import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { runShellSessionCommand } from "../../services/shell-commands.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerRunShellSessionCommand(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.runShellSessionCommand, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:exec", projectId);
    const result = await runShellSessionCommand(deps, deps.sessions, actor, projectId, sessionId, c.req.valid("json"));
    return c.json(result, 200);
  });
}
