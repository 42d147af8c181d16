import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { getSandboxTokenRow, toSandboxToken } from "../../services/tokens.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerGetSandboxToken(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.getSandboxToken, async (c) => {
    const row = await getSandboxTokenRow(deps, c.req.valid("param").id);
    await actorFor(deps, c, "sandbox-tokens:manage", row.project_id);
    return c.json(toSandboxToken(row), 200);
  });
}
