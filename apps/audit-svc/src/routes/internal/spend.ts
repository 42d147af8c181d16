import { AUDIT_INTERNAL, SpendReleaseRequest, SpendReserveRequest, SpendSettleRequest } from "@agentplane/contracts";
import { forbidden, ProblemError, zodIssuesToFieldErrors } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceContext } from "@agentplane/service-kit";
import type { z } from "zod";
import type { RouteDeps } from "../deps.ts";

async function body<S extends z.ZodType>(c: ServiceContext, schema: S): Promise<z.infer<S>> {
  const principal = requirePrincipal(c);
  // Only other services (the inference proxy) decide about spend; no user token reaches this.
  if (principal.type !== "service") throw forbidden("The spend API is for internal services");
  const parsed = schema.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) {
    throw new ProblemError("validation-failed", {
      detail: "The request is not valid",
      errors: zodIssuesToFieldErrors("body", parsed.error.issues),
    });
  }
  return parsed.data;
}

/** The internal spend decision API (not under /v1; the gateway never routes here). */
export function registerSpendApi({ app, spend }: RouteDeps): void {
  app.post(AUDIT_INTERNAL.reserve, async (c) => c.json(await spend.reserve(await body(c, SpendReserveRequest)), 200));
  app.post(AUDIT_INTERNAL.settle, async (c) => c.json(await spend.settle(await body(c, SpendSettleRequest)), 200));
  app.post(AUDIT_INTERNAL.release, async (c) => c.json(await spend.release(await body(c, SpendReleaseRequest)), 200));
}
