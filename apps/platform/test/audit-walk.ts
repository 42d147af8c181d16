import { ALL_ROUTES, type ContractRoute, type ServiceName } from "@agentplane/contracts";
import { expect } from "vitest";

/** One call of the walk and what the audit trail must hold for it. */
export interface WalkedCall {
  label: string;
  method: string;
  path: string;
  status: number;
  requestId: string;
  /** The organization its record must name, when the call names one that exists. */
  orgId?: string;
  /** The contract operation called. */
  operationId: string;
  /** Whether the call carried a credential (a bearer token). */
  credentials: boolean;
  /** The OAuth error code of a refusal (the answer's `error`), when it has one. */
  oauthError?: string;
}

export interface StoredRequestRecord {
  requestId: string;
  orgId: string | null;
  status: number | null;
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Every mutating call and every 401/403 is recorded, except the answers docs/audit-and-spend.md
 * names as routine: a device sign-in's token polls refused before the decision (400 with
 * `authorization_pending` or `slow_down`; its other 400s are recorded), and the current session
 * asked for with no credential at all (401).
 */
export function mustBeAudited(
  call: Pick<WalkedCall, "method" | "status" | "operationId" | "credentials" | "oauthError">,
): boolean {
  if (call.operationId === "pollDeviceAuthorization" && call.status === 400) {
    return call.oauthError !== "authorization_pending" && call.oauthError !== "slow_down";
  }
  if (call.operationId === "getCurrentSession" && call.status === 401 && !call.credentials) return false;
  return MUTATING.has(call.method) || call.status === 401 || call.status === 403;
}

async function send(
  baseUrl: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; requestId: string; json: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // a non-JSON answer (a proxied upstream): only the status matters here
  }
  return { status: res.status, requestId: res.headers.get("x-request-id") ?? "", json };
}

/** An OpenAPI document small enough to be an HTTP connector's spec without a server behind it. */
const WALK_SPEC = {
  openapi: "3.0.3",
  info: { title: "walk", version: "1" },
  paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "pong" } } } } },
};

/**
 * Resources the walk creates in its project before walking, so that routes naming them by an id of
 * their own (`/v1/clusters/{clusterId}`, `/v1/sandbox-tokens/{id}`…) act on something of the walk's
 * organization. Each names the path parameters its id fills; a seed whose service is not deployed
 * is left out (its parameters then get a dummy id).
 */
const SEEDS: {
  service: ServiceName;
  params: string[];
  path: string;
  body: (known: Record<string, string>) => Record<string, unknown>;
}[] = [
  {
    service: "sandbox",
    params: ["sandboxId"],
    path: "/v1/projects/{projectId}/sandboxes",
    body: () => ({ name: "walk" }),
  },
  {
    service: "sandbox",
    params: ["id"],
    path: "/v1/projects/{projectId}/sandbox-tokens",
    body: (k) => ({ sandboxId: k.sandboxId, name: "walk" }),
  },
  {
    service: "connections",
    params: ["clusterId"],
    path: "/v1/projects/{projectId}/clusters",
    body: () => ({ name: "walk" }),
  },
  {
    service: "governance",
    params: ["credentialId"],
    path: "/v1/projects/{projectId}/credentials",
    body: () => ({
      name: "walk-aws",
      kind: "aws-keys",
      accessKeyId: "AKIAWALKWALKWALK",
      secretAccessKey: "walk-secret",
    }),
  },
  {
    service: "connections",
    params: ["connectionId"],
    path: "/v1/projects/{projectId}/aws-connections",
    body: (k) => ({ name: "walk", credentialId: k.credentialId, defaultRegion: "eu-west-1" }),
  },
  {
    service: "connections",
    params: ["serverId", "connectorId"],
    path: "/v1/projects/{projectId}/mcp-servers/http",
    body: () => ({ name: "walk", spec: WALK_SPEC, baseUrl: "https://walk.example.test" }),
  },
];

/**
 * Calls every contract route (WebSocket upgrades aside) three times: without a token, with a
 * viewer-role API token and with the owner's token. Path parameters are ids created for the walk
 * (its organization, project, API token and the seeded resources above), a dummy id otherwise;
 * bodies are `{}`. Routes of services not deployed are left out. A route added to the contracts
 * later is walked without a change here, and its records must name the walk's organization
 * whenever its path names one of the walk's ids.
 */
export async function walkEveryRoute(
  baseUrl: string,
  ownerToken: string,
  deployed: ReadonlySet<ServiceName>,
): Promise<WalkedCall[]> {
  const calls: WalkedCall[] = [];
  const record = (
    label: string,
    operationId: string,
    method: string,
    path: string,
    r: { status: number; requestId: string; json?: Record<string, unknown> },
    orgId?: string,
    credentials = true,
  ) => {
    expect(r.requestId, `${method} ${path}`).not.toBe("");
    const oauthError = r.json?.error;
    calls.push({
      label,
      operationId,
      credentials,
      ...(typeof oauthError === "string" ? { oauthError } : {}),
      method,
      path,
      status: r.status,
      requestId: r.requestId,
      ...(orgId ? { orgId } : {}),
    });
  };

  const org = await send(baseUrl, "POST", "/v1/orgs", ownerToken, { name: "Audit walk" });
  expect(org.status).toBe(201);
  const orgId = org.json.id as string;
  record("setup", "createOrganization", "POST", "/v1/orgs", org, orgId);
  const project = await send(baseUrl, "POST", `/v1/orgs/${orgId}/projects`, ownerToken, { name: "walk" });
  expect(project.status).toBe(201);
  const projectId = project.json.id as string;
  record("setup", "createProject", "POST", `/v1/orgs/${orgId}/projects`, project, orgId);
  const viewer = await send(baseUrl, "POST", `/v1/orgs/${orgId}/api-tokens`, ownerToken, { name: "v", role: "viewer" });
  expect(viewer.status).toBe(201);
  record("setup", "createApiToken", "POST", `/v1/orgs/${orgId}/api-tokens`, viewer, orgId);
  const viewerToken = viewer.json.token as string;

  /** Ids of the walk's organization, by the path parameter they fill. */
  const owned: Record<string, string> = { orgId, projectId, tokenId: viewer.json.id as string };
  for (const seed of SEEDS.filter((s) => deployed.has(s.service))) {
    const path = seed.path.replace("{projectId}", projectId);
    const created = await send(baseUrl, "POST", path, ownerToken, seed.body(owned));
    expect(created.status, `${path}: ${JSON.stringify(created.json)}`).toBe(201);
    record("setup", "seed", "POST", path, created, orgId);
    for (const param of seed.params) owned[param] = created.json.id as string;
  }
  const known: Record<string, string> = { ...owned, region: "us-east-1", path: "v1/x" };
  const fill = (route: ContractRoute) =>
    route.path.replaceAll(/\{([^}]+)\}/g, (_, name: string) => known[name] ?? `${name.replace(/Id$/, "")}_walk0`);
  // A call naming one of the walk's ids belongs to the walk's organization.
  const orgOf = (route: ContractRoute) =>
    [...route.path.matchAll(/\{([^}]+)\}/g)].some(([, name]) => name! in owned) ? orgId : undefined;
  const routes = ALL_ROUTES.filter((r) => !r["x-websocket"] && deployed.has(r["x-service"]));
  // Deletions last, the organization's own last of all, so that the other calls find what they name.
  const ordered = [...routes].sort((a, b) => rank(a) - rank(b));

  for (const [label, token] of [
    ["no token", undefined],
    ["viewer", viewerToken],
    ["owner", ownerToken],
  ] as const) {
    for (const route of ordered) {
      const method = route.method.toUpperCase();
      const path = fill(route);
      const r = await send(baseUrl, method, path, token, MUTATING.has(method) ? {} : undefined);
      expect(r.status, `${label} ${method} ${path}`).not.toBe(500);
      // Records of calls refused before the caller is known name no organization.
      record(
        label,
        route.operationId,
        method,
        path,
        r,
        r.status === 401 ? undefined : orgOf(route),
        token !== undefined,
      );
    }
  }
  return calls;
}

/**
 * Deletions after everything else: the deepest paths first (a cluster's proxy before the cluster),
 * project-scoped ones after the resources with ids of their own (a sandbox token before its
 * sandbox), then the project, then the organization.
 */
function rank(route: ContractRoute): number {
  if (route.method.toUpperCase() !== "DELETE") return 0;
  if (route.path === "/v1/orgs/{orgId}") return 300;
  if (route.path === "/v1/projects/{projectId}") return 200;
  const depth = route.path.split("/").length;
  return (route.path.startsWith("/v1/projects/") ? 150 : 100) - depth;
}

/** One request record per audited call, each naming the organization the call belongs to. */
export function expectCompleteAudit(calls: readonly WalkedCall[], records: readonly StoredRequestRecord[]): void {
  const byRequest = new Map<string, StoredRequestRecord[]>();
  for (const r of records) byRequest.set(r.requestId, [...(byRequest.get(r.requestId) ?? []), r]);
  const missing: string[] = [];
  const wrongOrg: string[] = [];
  for (const call of calls) {
    const found = byRequest.get(call.requestId) ?? [];
    const what = `${call.label}: ${call.method} ${call.path} → ${call.status}`;
    if (!mustBeAudited(call)) {
      if (found.length > 0) missing.push(`${what} (recorded though not audited)`);
      continue;
    }
    if (found.length !== 1) {
      missing.push(`${what} (${found.length} records)`);
      continue;
    }
    if (found[0]!.status !== call.status) missing.push(`${what} (record says ${found[0]!.status})`);
    if (call.orgId && found[0]!.orgId !== call.orgId) wrongOrg.push(`${what} (org ${found[0]!.orgId})`);
  }
  expect(missing).toEqual([]);
  expect(wrongOrg).toEqual([]);
}

export function expectedRecordCount(calls: readonly WalkedCall[]): number {
  return calls.filter(mustBeAudited).length;
}
