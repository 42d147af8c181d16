import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerDeleteShellSession(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.deleteShellSession, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:exec", projectId);
    deps.sessions.close(deps.sessions.get(projectId, sessionId));
    return c.body(null, 204);
  });
}
