import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { toSandbox } from "../../services/mapping.ts";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerGetSandbox(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.getSandbox, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId, sandboxId);
    return c.json(toSandbox(await getSandboxRow(deps, projectId, sandboxId)), 200);
  });
}
