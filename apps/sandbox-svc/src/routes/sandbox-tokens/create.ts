import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { getSandboxRow } from "../../services/sandboxes.ts";
import { createSandboxToken, toSandboxToken } from "../../services/tokens.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

/** Creates a sandbox token; its secret is in this response only. */
export function registerCreateSandboxToken(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.createSandboxToken, async (c) => {
    const { projectId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandbox-tokens:manage", projectId);
    const input = c.req.valid("json");
    const sandbox = await getSandboxRow(deps, projectId, input.sandboxId);
    const { row, token } = await createSandboxToken(deps, actor, sandbox, input);
    return c.json({ ...toSandboxToken(row), token }, 201);
  });
}
