import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { getSandboxRow } from "../../services/sandboxes.ts";
import {
  createSandboxToken,
  getSandboxTokenRow,
  listSandboxTokens,
  revokeSandboxToken,
  toSandboxToken,
} from "../../services/tokens.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

/** Sandbox token operations: create (secret shown once), list, get, revoke. */
export function registerSandboxTokens(app: ServiceApp, deps: RouteDeps): void {
  app.openapi(sandboxContracts.createSandboxToken, async (c) => {
    const { projectId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandbox-tokens:manage", projectId);
    const input = c.req.valid("json");
    const sandbox = await getSandboxRow(deps, projectId, input.sandboxId);
    const { row, token } = await createSandboxToken(deps, actor, sandbox, input);
    return c.json({ ...toSandboxToken(row), token }, 201);
  });

  app.openapi(sandboxContracts.listSandboxTokens, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandbox-tokens:manage", projectId);
    return c.json({ items: (await listSandboxTokens(deps, projectId)).map(toSandboxToken) }, 200);
  });

  app.openapi(sandboxContracts.getSandboxToken, async (c) => {
    const row = await getSandboxTokenRow(deps, c.req.valid("param").id);
    await actorFor(deps, c, "sandbox-tokens:manage", row.project_id);
    return c.json(toSandboxToken(row), 200);
  });

  app.openapi(sandboxContracts.deleteSandboxToken, async (c) => {
    const row = await getSandboxTokenRow(deps, c.req.valid("param").id);
    const actor = await actorFor(deps, c, "sandbox-tokens:manage", row.project_id);
    await revokeSandboxToken(deps, actor, row);
    return c.body(null, 204);
  });
}
