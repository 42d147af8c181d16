import { createSandboxRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { createSandbox } from "../../services/create.ts";
import { toSandbox } from "../../services/mapping.ts";
import { stage } from "../../stages.ts";

export function registerCreateSandbox(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(createSandboxRoute, async (c) => {
    stage("create: handler");
    const { projectId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "sandboxes:write", { projectId });
    stage("create: authorized");
    const row = await createSandbox(ctx, caller, { projectId, ...c.req.valid("json") });
    const answer = c.json(toSandbox(row, ctx.config.ingressHost, ctx.driver), 201);
    stage("create: answered");
    return answer;
  });
}
