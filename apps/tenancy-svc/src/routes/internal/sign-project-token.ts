import { internalSignProjectTokenRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import { secretKeysOf } from "../../config.ts";
import type { TenancyContext } from "../../context.ts";
import { ProjectTokenSigner } from "../../services/project-tokens.ts";

export function registerInternalSignProjectToken(app: ServiceApp, ctx: TenancyContext): void {
  const signer = new ProjectTokenSigner(ctx.db, secretKeysOf(ctx.config));
  app.openapi(internalRoute(internalSignProjectTokenRoute), async (c) => {
    const { projectId } = c.req.valid("param");
    const signed = await signer.sign(projectId, c.req.valid("json"));
    if (!signed) throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    return c.json(signed, 200);
  });
}
