import { internalResolveSessionRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { resolveSession } from "../../services/sessions.ts";

export function registerInternalResolveSession(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalResolveSessionRoute), async (c) => {
    const resolved = await resolveSession(ctx, c.req.valid("json").secret);
    if (!resolved) throw new ProblemError("unauthenticated", { detail: "The session is not open" });
    return c.json(resolved, 200);
  });
}
