import { internalResolveApiTokenRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { resolveApiTokenWithExpiry } from "../../services/api-tokens.ts";

export function registerInternalResolveApiToken(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalResolveApiTokenRoute), async (c) => {
    const { token } = c.req.valid("json");
    const resolved = await resolveApiTokenWithExpiry(ctx.db, token);
    if (!resolved) throw new ProblemError("unauthenticated", { detail: "The token is not valid" });
    const { principal, expiresAt } = resolved;
    return c.json({ principal, ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}) }, 200);
  });
}
