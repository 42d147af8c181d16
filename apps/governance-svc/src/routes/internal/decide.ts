import { DecisionRequest, GOVERNANCE_INTERNAL } from "@agentplane/contracts";
import { decide } from "../../services/decisions.ts";
import type { RouteDeps } from "../scope.ts";
import { parseJson, requireService } from "./service-only.ts";

/** The one decision endpoint every enforcement point asks (service identities only). */
export function registerDecide({ app, ctx }: RouteDeps): void {
  app.post(GOVERNANCE_INTERNAL.decide, async (c) => {
    requireService(c);
    const request = await parseJson(c, DecisionRequest);
    return c.json(await decide(ctx, request, c.get("requestId")), 200);
  });
  // Allows are counted rather than audited one by one; this replica's counts since it started.
  app.get(GOVERNANCE_INTERNAL.metrics, async (c) => {
    requireService(c);
    const { credentialResolutions, ...decisions } = ctx.counters;
    return c.json({ decisions, credentialResolutions }, 200);
  });
}
