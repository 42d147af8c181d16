import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { listSandboxTokens, toSandboxToken } from "../../services/tokens.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

export function registerListSandboxTokens(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.listSandboxTokens, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandbox-tokens:manage", projectId);
    return c.json({ items: (await listSandboxTokens(deps, projectId)).map(toSandboxToken) }, 200);
  });
}
