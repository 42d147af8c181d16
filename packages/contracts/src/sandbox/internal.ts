import { z } from "@hono/zod-openapi";
import { defineInternalRoute, type InternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";
import { ResolvedPrincipal } from "../tenancy/internal.ts";

/** Sandbox tokens look like `apsb_<id>_<secret>`; the gateway sends tokens with this prefix to sandbox-svc. */
export const SANDBOX_TOKEN_PREFIX = "apsb_";

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

export const QuerySandboxesRequest = z.object({
  orgId: z.string().min(1).max(200),
  projectId: z.string().min(1).max(200).optional(),
  sandboxId: z.string().min(1).max(200).optional(),
});
export type QuerySandboxesRequest = z.infer<typeof QuerySandboxesRequest>;

/** What governance needs of a sandbox to decide about it (effective policy, drift): never env values. */
export const SandboxSummarySchema = z.object({
  id: z.string(),
  orgId: z.string(),
  projectId: z.string(),
  name: z.string(),
  image: z.string(),
  labels: z.record(z.string(), z.string()),
  ports: z.array(z.object({ port: z.number().int(), visibility: z.enum(["private", "public"]) })),
  /** The sandbox's state (`running`, `stopped`, …). */
  status: z.string(),
  createdAt: z.string(),
});
export type SandboxSummary = z.infer<typeof SandboxSummarySchema>;

export const QuerySandboxesResponse = z.object({ items: z.array(SandboxSummarySchema) });
export type QuerySandboxesResponse = z.infer<typeof QuerySandboxesResponse>;

const sandbox = { service: "sandbox" } as const;

export const internalResolveSandboxTokenRoute = defineInternalRoute(sandbox, {
  method: "post",
  path: "/internal/authn/sandbox-token",
  operationId: "internalResolveSandboxToken",
  summary: "Resolve a sandbox token",
  description: "The principal of an `apsb_` token; 401 problem when unknown, revoked or expired.",
  request: jsonBody(ResolveSandboxTokenRequest, "The token as presented"),
  responses: jsonOk(ResolvedPrincipal, "The token's principal (type `sandbox`)"),
});

export const internalQuerySandboxesRoute = defineInternalRoute(sandbox, {
  method: "post",
  path: "/internal/sandboxes/query",
  operationId: "internalQuerySandboxes",
  summary: "Query an organization's sandboxes",
  description: "What governance needs of an organization's sandboxes (effective policy, drift); never env values.",
  request: jsonBody(QuerySandboxesRequest, "The organization, optionally one project or one sandbox"),
  responses: jsonOk(QuerySandboxesResponse, "The sandboxes"),
});

/** What the cluster's egress proxy needs of a sandbox to have its destinations decided. */
export const SandboxEgressFactsSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  projectId: z.string(),
  labels: z.record(z.string(), z.string()),
});
export type SandboxEgressFacts = z.infer<typeof SandboxEgressFactsSchema>;

const EgressRefusalPolicy = z.object({
  bindingId: z.string().max(200),
  policyId: z.string().max(200),
  version: z.number().int(),
});

/**
 * One refused connection as the egress proxy saw it, for sandbox-svc to record as
 * `sandbox.egress_denied`: the rule that refused (or the proxy's own `reason`), the reasons and
 * policy versions of the decision, and on a window's summary how many repeats it counted.
 */
export const EgressRefusalRequest = z.object({
  sandboxId: z.string().min(1).max(200),
  host: z.string().min(1).max(253),
  port: z.number().int().min(0).max(65_535),
  ruleId: z.string().max(200).nullable(),
  reasons: z.array(EgressRefusalPolicy.extend({ ruleId: z.string().max(200) })).max(100),
  policies: z.array(EgressRefusalPolicy).max(100),
  /** Why it was refused when no rule did (no policy permits egress, a private address). */
  reason: z.string().max(200).optional(),
  /** On a window's summary: the repeats counted, and the window's length. */
  repeats: z.number().int().min(1).optional(),
  windowSeconds: z.number().positive().optional(),
});
export type EgressRefusalRequest = z.infer<typeof EgressRefusalRequest>;

export const EgressRefusalResponse = z.object({ recorded: z.literal(true) });

/** The egress proxy (its own identity, decision 0062) is their only caller. */
const sandboxForEgress = { service: "sandbox", callers: ["egress"] } as const;

export const internalGetSandboxEgressRoute = defineInternalRoute(sandboxForEgress, {
  method: "get",
  path: "/internal/egress/sandboxes/{sandboxId}",
  operationId: "internalGetSandboxEgress",
  summary: "A sandbox's egress facts",
  description:
    "The organization, project and labels the egress proxy decides a sandbox's destinations with; 404 problem when unknown.",
  request: { params: z.object({ sandboxId: z.string().min(1).max(200) }) },
  responses: jsonOk(SandboxEgressFactsSchema, "The sandbox's egress facts"),
});

export const internalRecordEgressRefusalRoute = defineInternalRoute(sandboxForEgress, {
  method: "post",
  path: "/internal/egress/refusals",
  operationId: "internalRecordEgressRefusal",
  summary: "Record an egress refusal",
  description:
    "Records a connection the egress proxy refused (or a window's summary of its repeats) as `sandbox.egress_denied` through sandbox-svc's outbox; 404 problem when the sandbox is unknown.",
  request: jsonBody(EgressRefusalRequest, "The refusal"),
  responses: jsonOk(EgressRefusalResponse, "Recorded"),
});

/**
 * The internal sandbox-svc endpoints, each exported by name above: served with service-kit's
 * `internalRoute`, called with `callInternal`. This list is for checks that walk them all.
 */
export const sandboxInternalRoutes: readonly InternalRoute[] = [
  internalResolveSandboxTokenRoute,
  internalQuerySandboxesRoute,
  internalGetSandboxEgressRoute,
  internalRecordEgressRefusalRoute,
];
