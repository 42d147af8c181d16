import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { openShellSession, toShellSession } from "../../services/shell-commands.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerCreateShellSession(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.createShellSession, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:exec", projectId);
    const session = await openShellSession(deps, deps.sessions, projectId, c.req.valid("json").sandboxId);
    return c.json(toShellSession(session, deps.sessions.idleMs), 201);
  });
}
