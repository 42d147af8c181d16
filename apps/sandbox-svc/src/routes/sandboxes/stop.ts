import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { stopSandbox } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerStopSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.stopSandbox, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:write", projectId);
    return c.json(toSandbox(await stopSandbox(deps, actor, projectId, sandboxId)), 200);
  });
}
