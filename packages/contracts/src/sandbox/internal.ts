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

/** `<slug>.<ingressHost>` or `<port>-<slug>.<ingressHost>` → target; anything else → undefined. */
export function parseIngressHost(host: string, ingressHost: string): { slug: string; port?: number } | undefined {
  const name = host.toLowerCase().replace(/:\d+$/, "");
  const suffix = `.${ingressHost.toLowerCase()}`;
  if (!name.endsWith(suffix)) return undefined;
  const label = name.slice(0, -suffix.length);
  if (!label || label.includes(".")) return undefined;
  const m = /^(\d{1,5})-([a-z].*)$/.exec(label);
  if (m) return { slug: m[2] as string, port: Number(m[1]) };
  return { slug: label };
}

/** The SANDBOX_INGRESS_HEADER value for a target: `<slug>` or `<slug>:<port>`. */
export function ingressHeaderValue(target: { slug: string; port?: number }): string {
  return target.port === undefined ? target.slug : `${target.slug}:${target.port}`;
}

export const ResolveSandboxTokenRequest = z.object({ token: z.string().min(1).max(512) });
