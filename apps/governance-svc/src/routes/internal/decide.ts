import { EGRESS_IDENTITY_SIGNER, internalDecideRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { ServiceApp } from "@agentplane/service-kit";
import { internalRoute } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { decide } from "../../services/decisions.ts";

/** The one decision endpoint every enforcement point asks (service identities only). */
export function registerInternalDecide(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(internalRoute(internalDecideRoute), async (c) => {
    const request = c.req.valid("json");
    // The egress proxy's own key decides a sandbox's destinations and nothing else (decision 0062).
    if (
      c.get("identitySigner") === EGRESS_IDENTITY_SIGNER &&
      (request.action !== "sandbox:egress" || request.principal.type !== "sandbox")
    ) {
      throw new ProblemError("forbidden", {
        detail: "The egress proxy's identity decides sandbox:egress for a sandbox only",
      });
    }
    return c.json(await decide(ctx, request, c.get("requestId")), 200);
  });
}
