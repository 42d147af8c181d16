import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { getSandboxTokenRow, revokeSandboxToken } from "../../services/tokens.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerRevokeSandboxToken(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.deleteSandboxToken, async (c) => {
    const row = await getSandboxTokenRow(deps, c.req.valid("param").id);
    const actor = await actorFor(deps, c, "sandbox-tokens:manage", row.project_id);
    await revokeSandboxToken(deps, actor, row);
    return c.body(null, 204);
  });
}
