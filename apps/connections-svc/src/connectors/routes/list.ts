import { listConnectorsRoute } from "@agentplane/contracts";
import { listConnectors } from "../services/connectors.ts";
import { type ConnectorRouteDeps, projectActor } from "./helpers.ts";

export function registerListConnectors(deps: ConnectorRouteDeps): void {
  deps.app.openapi(listConnectorsRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    await projectActor(c, deps, "connections:read", projectId);
    return c.json(await listConnectors(deps.ctx, projectId, limit, cursor), 200);
  });
}
