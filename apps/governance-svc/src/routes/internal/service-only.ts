import type { Principal } from "@agentplane/contracts";
import { ProblemError, zodIssuesToFieldErrors } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceContext } from "@agentplane/service-kit";
import type { z } from "zod";

/** Internal endpoints answer service identities only (enforcement points, proxies). */
export function requireService(c: ServiceContext): Principal {
  const principal = requirePrincipal(c);
  if (principal.type !== "service") {
    throw new ProblemError("forbidden", { detail: "Internal endpoints are for services only" });
  }
  return principal;
}

export async function parseJson<S extends z.ZodType>(c: ServiceContext, schema: S): Promise<z.infer<S>> {
  const raw: unknown = await c.req.json().catch(() => {
    throw new ProblemError("malformed-json", { detail: "The body is not JSON" });
  });
  const result = schema.safeParse(raw);
  if (!result.success) {
    throw new ProblemError("validation-failed", {
      detail: "The request is not valid",
      errors: zodIssuesToFieldErrors("body", result.error.issues),
    });
  }
  return result.data;
}
