import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toShellSession } from "../../services/shell-commands.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerGetShellSession(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.getShellSession, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId);
    return c.json(toShellSession(deps.sessions.get(projectId, sessionId), deps.sessions.idleMs), 200);
  });
}
