import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { createSandbox } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerCreateSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.createSandbox, async (c) => {
    const { projectId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:write", projectId);
    const row = await createSandbox(deps, actor, projectId, c.req.valid("json"));
    return c.json(toSandbox(row), 201);
  });
}
