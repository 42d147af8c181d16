import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { deleteSandbox } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerDeleteSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.deleteSandbox, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:write", projectId);
    for (const session of deps.sessions.list(projectId)) {
      if (session.sandboxId === sandboxId) deps.sessions.close(session);
    }
    await deleteSandbox(deps, actor, projectId, sandboxId);
    return c.body(null, 204);
  });
}
