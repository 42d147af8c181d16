import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { listSandboxes } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerListSandboxes(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.listSandboxes, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId);
    const page = await listSandboxes(deps, projectId, c.req.valid("query"));
    return c.json(
      { items: page.items.map(toSandbox), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) },
      200,
    );
  });
}
