import { randomUUID } from "node:crypto";
import { INTERNAL_IDENTITY_HEADER, type Principal, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { createOnError, ProblemError, problemJson, validationHook } from "@agentplane/problem-details";
import { inServiceSpan } from "@agentplane/telemetry";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { checkReadiness, healthResponse, type ReadinessChecks } from "./health.ts";
import { IdentityVerifier, type InternalKeys } from "./identity.ts";
import type { Logger } from "./logger.ts";
import { withResourceOrg } from "./resource-org.ts";
import type { ScopedIdentityKey } from "./scoped-identity.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export interface ServiceVariables {
  requestId: string;
  principal: Principal | undefined;
  /** The scoped signer (`egress`) whose own key signed the identity; absent for the shared key. */
  identitySigner?: string | undefined;
}
export type ServiceEnv = { Variables: ServiceVariables };
export type ServiceApp = OpenAPIHono<ServiceEnv>;
export type ServiceContext = Context<ServiceEnv>;

export interface ServiceAppOptions {
  /** The audience of the internal identity JWT this service accepts (its service name). */
  name: string;
  keys: InternalKeys;
  /** Signers with a key pair of their own whose identities this service accepts on named routes only. */
  scopedKeys?: readonly ScopedIdentityKey[];
  logger?: Logger;
  /** The dependencies behind `GET /health/ready` and `GET /health` (database, bus, driver…). */
  checks?: ReadinessChecks;
}

/**
 * A service app with the shared behaviour: request id, internal identity verification, a 1 MiB
 * body limit, one validation hook and one error handler that answer `application/problem+json`.
 */
export function createServiceApp(options: ServiceAppOptions): ServiceApp {
  const app = new OpenAPIHono<ServiceEnv>({ defaultHook: validationHook });
  const verifier = new IdentityVerifier(options.keys, options.name, options.scopedKeys);
  app.use("*", async (c, next) => {
    c.set("requestId", c.req.header(REQUEST_ID_HEADER) ?? randomUUID());
    c.set("principal", undefined);
    const token = c.req.header(INTERNAL_IDENTITY_HEADER);
    if (token) {
      try {
        const identity = await verifier.verify(token, { method: c.req.method, path: c.req.path });
        c.set("principal", identity.principal);
        if (identity.signer) c.set("identitySigner", identity.signer);
      } catch {
        throw new ProblemError("unauthenticated", { detail: "Invalid internal identity" });
      }
    }
    await inServiceSpan(c.req.method, async (nameRoute) => {
      await withResourceOrg(c, next);
      nameRoute(c.req.routePath.replace(/:(\w+)/g, "{$1}"));
    });
    c.header(REQUEST_ID_HEADER, c.get("requestId"));
  });
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => problemJson(c, new ProblemError("payload-too-large", { detail: "The body exceeds 1 MiB" })),
    }),
  );
  const readiness = () => checkReadiness(options.checks ?? {});
  for (const [path, kind] of [
    ["/health", "summary"],
    ["/health/live", "live"],
    ["/health/ready", "ready"],
  ] as const) {
    app.get(path, async (c) => {
      const { status, body } = await healthResponse(kind, options.name, readiness);
      return c.json(body, status as 200 | 503);
    });
  }
  app.onError(createOnError(options.logger));
  app.notFound((c) =>
    problemJson(c, new ProblemError("not-found", { detail: `No route for ${c.req.method} ${c.req.path}` })),
  );
  return app;
}

/** The caller, or a 401 problem when the request carries no verified identity. */
export function requirePrincipal(c: Context<ServiceEnv>): Principal {
  const principal = c.get("principal");
  if (!principal) throw new ProblemError("unauthenticated", { detail: "Authentication is required" });
  return principal;
}
