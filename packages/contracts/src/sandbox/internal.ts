import { z } from "@hono/zod-openapi";

/** Sandbox tokens look like `apsb_<id>_<secret>`; the gateway sends tokens with this prefix to sandbox-svc. */
export const SANDBOX_TOKEN_PREFIX = "apsb_";

/** Internal sandbox-svc endpoints (service principals only; never routed by the gateway). */
export const SANDBOX_INTERNAL = {
  /** POST `{token}` → `{principal}` (type `sandbox`), or 401 problem when unknown, revoked or expired. */
  resolveSandboxToken: "/internal/authn/sandbox-token",
} as const;

/**
 * Ingress over HTTP (distributed mode): the gateway forwards a request for `<slug>.<ingress host>`
 * (or `<port>-<slug>.…`) to sandbox-svc unchanged apart from this header, set to `<slug>` or
 * `<slug>:<port>`, plus the internal identity header when the caller presented a bearer token.
 * Upgrades (WebSocket) carry the same headers. sandbox-svc never forwards either into the sandbox.
 */
export const SANDBOX_INGRESS_HEADER = "x-agentplane-ingress";

export const ResolveSandboxTokenRequest = z.object({ token: z.string().min(1).max(512) });
