import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toShellSession } from "../../services/shell-commands.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerListShellSessions(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.listShellSessions, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId);
    const items = deps.sessions.list(projectId).map((s) => toShellSession(s, deps.sessions.idleMs));
    return c.json({ items }, 200);
  });
}
