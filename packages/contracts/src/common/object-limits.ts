import { problemResponseSpec } from "@agentplane/problem-details";

/** The one setting that changes how many objects of each kind an organization, project or user may hold. */
export const OBJECT_LIMITS_SETTING = "OBJECT_LIMITS";

interface ObjectLimitKindSpec {
  /** What one object is called in a sentence ("connector"), and several ("connectors"). */
  one: string;
  many: string;
  /** What holds them: each organization, each project on its own, or each user. */
  per: "organization" | "project" | "organization and project" | "user";
  /** How many each holder may keep unless `OBJECT_LIMITS` says otherwise. */
  default: number;
  /** Which of them count (a revoked token or a finished invitation does not). */
  counted?: string;
  /** What frees a slot, when it is not a delete ("Stop one"). */
  free?: string;
}

/**
 * Every kind of stored object a tenant creates and the most each holder may keep by default: far
 * above normal use, low enough that one tenant cannot grow the shared control plane without bound.
 * `running-sandboxes` caps compute instead: how many of an organization's sandboxes may be up at
 * once. Spending limits are not here: each scope holds at most one per period already.
 */
export const OBJECT_LIMIT_KINDS = {
  projects: { one: "project", many: "projects", per: "organization", default: 1000 },
  teams: { one: "team", many: "teams", per: "organization", default: 1000 },
  "api-tokens": {
    one: "API token",
    many: "API tokens",
    per: "organization",
    default: 1000,
    counted: "neither revoked nor expired",
    free: "Revoke one",
  },
  invitations: {
    one: "invitation",
    many: "invitations",
    per: "organization",
    default: 1000,
    counted: "pending and not expired",
    free: "Revoke one",
  },
  policies: { one: "policy", many: "policies", per: "organization and project", default: 1000 },
  bindings: { one: "binding", many: "bindings", per: "organization and project", default: 1000 },
  credentials: { one: "credential", many: "credentials", per: "project", default: 1000 },
  connectors: { one: "connector", many: "connectors", per: "project", default: 500 },
  clusters: { one: "cluster", many: "clusters", per: "project", default: 100 },
  "aws-connections": { one: "AWS connection", many: "AWS connections", per: "project", default: 100 },
  // Held by a user, so that no one multiplies the per-organization limits, or fills the database
  // with personal things, by creating without end.
  organizations: {
    one: "organization",
    many: "organizations",
    per: "user",
    default: 100,
    counted: "as an owner",
  },
  "personal-api-tokens": {
    one: "personal API token",
    many: "personal API tokens",
    per: "user",
    default: 1000,
    counted: "neither revoked nor expired",
    free: "Revoke one",
  },
  sessions: {
    one: "browser session",
    many: "browser sessions",
    per: "user",
    default: 1000,
    counted: "neither revoked nor expired",
    free: "Revoke one",
  },
  sandboxes: { one: "sandbox", many: "sandboxes", per: "project", default: 1000, counted: "not being deleted" },
  // Compute, not storage: each one is processes on a shared host or a Pod on a shared cluster.
  "running-sandboxes": {
    one: "running sandbox",
    many: "sandboxes up at once",
    per: "organization",
    default: 100,
    counted: "(starting, running or stopping)",
    free: "Stop one",
  },
} as const satisfies Record<string, ObjectLimitKindSpec>;

export type ObjectLimitKind = keyof typeof OBJECT_LIMIT_KINDS;
export const OBJECT_LIMIT_KIND_NAMES = Object.keys(OBJECT_LIMIT_KINDS) as ObjectLimitKind[];

/** How many objects of each kind one holder may keep. */
export type ObjectLimits = Readonly<Record<ObjectLimitKind, number>>;

export const DEFAULT_OBJECT_LIMITS: ObjectLimits = Object.fromEntries(
  OBJECT_LIMIT_KIND_NAMES.map((kind) => [kind, OBJECT_LIMIT_KINDS[kind].default]),
) as Record<ObjectLimitKind, number>;

/** The 409 reason of one limited kind: its holder, its default and the setting that raises it. */
function limitReason(kind: ObjectLimitKind): string {
  const spec: ObjectLimitKindSpec = OBJECT_LIMIT_KINDS[kind];
  const holder = spec.per === "organization and project" ? "the organization or project" : `the ${spec.per}`;
  return `\`limit-exceeded\`: ${holder} already holds the most ${spec.many} ${spec.per === "user" ? "they" : "it"} may (${spec.default} unless \`${OBJECT_LIMITS_SETTING}\` sets \`${kind}=<n>\`)`;
}

/**
 * The 409 of a create route whose kind is limited (or of a route that starts sandboxes): what else
 * conflicts (a name taken, a state), then each limit, its default and the setting that raises it.
 */
export function limitedCreateConflict(kinds: ObjectLimitKind | ObjectLimitKind[], otherConflict?: string) {
  const limits = (Array.isArray(kinds) ? kinds : [kinds]).map(limitReason).join(", or ");
  return { 409: problemResponseSpec(otherConflict ? `${otherConflict}, or ${limits}` : limits) };
}
