import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { updateSandbox } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerUpdateSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.updateSandbox, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:write", projectId);
    return c.json(toSandbox(await updateSandbox(deps, actor, projectId, sandboxId, c.req.valid("json"))), 200);
  });
}
