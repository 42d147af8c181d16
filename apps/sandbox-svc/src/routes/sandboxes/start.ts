import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { startSandbox } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerStartSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.startSandbox, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:write", projectId);
    return c.json(toSandbox(await startSandbox(deps, actor, projectId, sandboxId)), 200);
  });
}
