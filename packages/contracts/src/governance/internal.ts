import { z } from "@hono/zod-openapi";
import { PrincipalSchema } from "../common/identity.ts";
import { defineInternalRoute, type InternalRoute, jsonBody, jsonOk } from "../common/internal-route.ts";
import { JsonObject } from "../common/schemas.ts";

/** The actions enforcement points ask about, by family. */
export const GOVERNED_ACTIONS = [
  "sandbox:create",
  "sandbox:update",
  "sandbox:start",
  "sandbox:exec",
  "sandbox:expose-port",
  "sandbox:egress",
  "llm:invoke",
  "cluster:get",
  "cluster:list",
  "cluster:watch",
  "cluster:create",
  "cluster:update",
  "cluster:patch",
  "cluster:delete",
  "cluster:deletecollection",
  "cluster:exec",
  "aws:call",
  "tool:call",
] as const;
export type GovernedAction = (typeof GOVERNED_ACTIONS)[number];

/** The resource a decision is about: its Cedar entity type and id, and the project it lives in. */
export const DecisionResource = z.object({
  /** Cedar entity type without namespace, e.g. `Sandbox`, `Model`, `ClusterResource`, `AwsService`, `Tool`, `Host`. */
  type: z.string().min(1),
  id: z.string().min(1),
  orgId: z.string().min(1),
  projectId: z.string().min(1).optional(),
  /** Labels of the resource, for bindings that select by label. */
  labels: z.record(z.string(), z.string()).optional(),
  /** The kind bindings select on (`sandbox`, `cluster`, `aws-connection`, `connector`). */
  kind: z.string().optional(),
});
export type DecisionResource = z.infer<typeof DecisionResource>;

export const DecisionRequest = z.object({
  principal: PrincipalSchema,
  action: z.enum(GOVERNED_ACTIONS),
  resource: DecisionResource,
  /** Action-specific attributes (see the per-family shapes below); never secrets or env values. */
  context: JsonObject().default({}),
});
export type DecisionRequest = z.input<typeof DecisionRequest>;

export const DecisionReason = z.object({
  policyId: z.string(),
  version: z.number().int(),
  ruleId: z.string(),
  bindingId: z.string(),
  mode: z.enum(["enforce", "dryrun"]),
  /**
   * True when the rule named is a `forbid` that matched; absent when the deny is that no permit
   * applied (the reason then names the permits to widen, or `default-deny`).
   */
  forbid: z
    .boolean()
    .optional()
    .describe("True when the rule named is a forbid that matched; absent when no permit applied"),
});
export type DecisionReason = z.infer<typeof DecisionReason>;

export const DecisionResponse = z.object({
  decision: z.enum(["allow", "deny"]),
  /** False when the deny came only from dryrun bindings (the caller proceeds). */
  enforced: z.boolean(),
  reasons: z.array(DecisionReason),
  evaluatedAt: z.string(),
  /**
   * The bound policy versions the decision was evaluated against (every binding that reaches the
   * resource and covers the action): an enforcement point that keeps what it admitted (the egress
   * proxy's open connections) knows which versions it holds.
   */
  policies: z
    .array(
      z.object({
        bindingId: z.string(),
        policyId: z.string(),
        version: z.number().int(),
        mode: z.enum(["enforce", "dryrun"]),
      }),
    )
    .optional(),
});
export type DecisionResponse = z.infer<typeof DecisionResponse>;

/** Context shapes per action family, so enforcement points and policy authors agree. */
export const SandboxDecisionContext = z.object({
  image: z.string().optional(),
  resources: z.object({ cpu: z.number().optional(), memoryMb: z.number().optional() }).optional(),
  ports: z.array(z.object({ port: z.number().int(), visibility: z.string() })).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  envNames: z.array(z.string()).optional(),
  argv: z.array(z.string()).optional(),
  command: z.string().optional(),
  tty: z.boolean().optional(),
  host: z.string().optional(),
  port: z.number().int().optional(),
});
export const LlmDecisionContext = z.object({
  provider: z.string(),
  family: z.string().optional(),
  region: z.string().optional(),
  modelId: z.string().optional(),
});
export const ClusterDecisionContext = z.object({
  group: z.string(),
  version: z.string().optional(),
  resource: z.string().optional(),
  subresource: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  path: z.string(),
});
export const AwsDecisionContext = z.object({
  service: z.string(),
  operation: z.string(),
  region: z.string(),
  bucket: z.string().optional(),
  key: z.string().optional(),
});
export const ToolDecisionContext = z.object({ connectorId: z.string(), tool: z.string() });

export const CREDENTIAL_KINDS = [
  "cloud-a-bearer",
  "cloud-a-keys",
  "cloud-b-key",
  "aws-keys",
  "aws-role",
  "http-bearer",
  "http-header",
  "http-basic",
] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const ResolveCredentialRequest = z.object({
  credentialId: z.string().min(1),
  /** The project the caller acts in; a credential of another project answers 404. */
  projectId: z.string().min(1),
  /** A secret version still in its rotation grace period (default: the current one). */
  version: z.number().int().min(1).optional(),
});
export type ResolveCredentialRequest = z.infer<typeof ResolveCredentialRequest>;

export const ResolveCredentialResponse = z.object({
  id: z.string(),
  kind: z.enum(CREDENTIAL_KINDS),
  /** Secret and non-secret fields of the kind, e.g. `{token}`, `{accessKeyId, secretAccessKey, sessionToken?}`. */
  fields: z.record(z.string(), z.string()),
  /** The secret version resolved. */
  version: z.number().int().optional(),
  /** For temporary credentials (`aws-role`: the STS session), when they stop working. */
  expiresAt: z.string().optional(),
});
export type ResolveCredentialResponse = z.infer<typeof ResolveCredentialResponse>;

export const FindCredentialsRequest = z.object({
  projectId: z.string().min(1).max(64),
  /** The kinds wanted, e.g. the inference proxy's `cloud-a-bearer`, `cloud-a-keys`, `cloud-b-key`. */
  kinds: z.array(z.enum(CREDENTIAL_KINDS)).min(1).max(CREDENTIAL_KINDS.length),
  /** Only these credentials (how a service checks that an id it was given is the project's). */
  ids: z.array(z.string().min(1).max(64)).min(1).max(100).optional(),
});
export type FindCredentialsRequest = z.infer<typeof FindCredentialsRequest>;

export const FoundCredential = z.object({
  id: z.string(),
  kind: z.enum(CREDENTIAL_KINDS),
  name: z.string(),
  secretVersion: z.number().int(),
  updatedAt: z.string(),
});
export type FoundCredential = z.infer<typeof FoundCredential>;

export const FindCredentialsResponse = z.object({
  /**
   * At most one credential per kind asked: the project's oldest of that kind (a stable choice
   * while newer ones are added); kinds the project has none of are absent. Never secrets.
   */
  items: z.array(FoundCredential),
});
export type FindCredentialsResponse = z.infer<typeof FindCredentialsResponse>;

export const GovernanceMetricsResponse = z.object({
  /** Decisions of this replica since it started, by outcome. */
  decisions: z.object({ allow: z.number().int(), deny: z.number().int(), dryrunDeny: z.number().int() }),
  credentialResolutions: z.number().int(),
});
export type GovernanceMetricsResponse = z.infer<typeof GovernanceMetricsResponse>;

const governance = { service: "governance" } as const;

export const internalDecideRoute = defineInternalRoute(governance, {
  method: "post",
  path: "/internal/governance/decisions",
  operationId: "internalDecide",
  summary: "Policy decision",
  description: "The one decision every enforcement point asks: may this principal do this action on this resource.",
  request: jsonBody(DecisionRequest, "The principal, action, resource and context"),
  responses: jsonOk(DecisionResponse, "The decision and the rules that made it"),
});

export const internalResolveCredentialRoute = defineInternalRoute(governance, {
  method: "post",
  path: "/internal/governance/credentials/resolve",
  operationId: "internalResolveCredential",
  summary: "Resolve a credential",
  description:
    "The plaintext fields of a credential, for the proxy that uses them; never cached by the caller's HTTP stack.",
  request: jsonBody(ResolveCredentialRequest, "The credential, the caller's project and an optional version"),
  responses: jsonOk(ResolveCredentialResponse, "The credential's fields"),
});

export const internalFindCredentialsRoute = defineInternalRoute(governance, {
  method: "post",
  path: "/internal/governance/credentials/find",
  operationId: "internalFindCredentials",
  summary: "Find a project's credentials",
  description: "A project's oldest credential of each kind asked, without secrets.",
  request: jsonBody(FindCredentialsRequest, "The project and the kinds"),
  responses: jsonOk(FindCredentialsResponse, "One credential per kind found"),
});

export const internalGovernanceMetricsRoute = defineInternalRoute(governance, {
  method: "get",
  path: "/internal/governance/metrics",
  operationId: "internalGovernanceMetrics",
  summary: "Decision counters",
  description: "Allows are counted rather than audited one by one: this replica's counts since it started.",
  responses: jsonOk(GovernanceMetricsResponse, "The counters"),
});

/**
 * The internal governance-svc endpoints, each exported by name above: served with service-kit's
 * `internalRoute`, called with `callInternal`. This list is for checks that walk them all.
 */
export const governanceInternalRoutes: readonly InternalRoute[] = [
  internalDecideRoute,
  internalResolveCredentialRoute,
  internalFindCredentialsRoute,
  internalGovernanceMetricsRoute,
];
