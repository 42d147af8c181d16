import { ResolveSandboxTokenRequest, SANDBOX_INTERNAL } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceApp } from "@agentplane/service-kit";
import { resolveSandboxToken } from "../../services/tokens.ts";
import type { RouteDeps } from "../helpers.ts";

/** The gateway resolves `apsb_…` bearer tokens here; only service principals may ask. */
export function registerResolveSandboxToken(app: ServiceApp, deps: RouteDeps): void {
  app.post(SANDBOX_INTERNAL.resolveSandboxToken, async (c) => {
    if (requirePrincipal(c).type !== "service") {
      throw new ProblemError("forbidden", { detail: "Internal endpoint for services" });
    }
    const parsed = ResolveSandboxTokenRequest.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) throw new ProblemError("bad-request", { detail: "Expected {token}" });
    return c.json({ principal: await resolveSandboxToken(deps, parsed.data.token) }, 200);
  });
}
