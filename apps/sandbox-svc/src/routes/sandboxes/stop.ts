import { stopSandboxRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toSandbox } from "../../services/mapping.ts";
import { stopSandbox } from "../../services/sandboxes.ts";
import { actorFor } from "../helpers.ts";

export function registerStopSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(stopSandboxRoute, async (c) => {
    const { projectId, sandboxId } = c.req.valid("param");
    const actor = await actorFor(ctx, c, "sandboxes:write", projectId);
    return c.json(toSandbox(await stopSandbox(ctx, actor, projectId, sandboxId)), 200);
  });
}
