import { internalResolveApiTokenRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { resolveApiToken } from "../../services/api-tokens.ts";

export function registerInternalResolveApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalResolveApiTokenRoute), async (c) => {
    const { token } = c.req.valid("json");
    const principal = await resolveApiToken(ctx.db, token);
    if (!principal) throw new ProblemError("unauthenticated", { detail: "The token is not valid" });
    return c.json({ principal }, 200);
  });
}
