import { createSandboxRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { createSandbox } from "../../services/sandboxes.ts";
import { actorFor } from "../helpers.ts";

export function registerCreateSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(createSandboxRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const actor = await actorFor(ctx, c, "sandboxes:write", projectId);
    const row = await createSandbox(ctx, actor, projectId, c.req.valid("json"));
    return c.json(toSandbox(row), 201);
  });
}
