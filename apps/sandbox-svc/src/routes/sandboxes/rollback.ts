import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { rollbackSandbox } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerRollbackSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.rollbackSandbox, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:write", projectId);
    const { revision, reason } = c.req.valid("json");
    return c.json(toSandbox(await rollbackSandbox(deps, actor, projectId, sandboxId, revision, reason)), 200);
  });
}
