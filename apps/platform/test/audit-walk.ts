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
}

export interface StoredRequestRecord {
  requestId: string;
  orgId: string | null;
  status: number | null;
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function mustBeAudited(call: { method: string; status: number }): boolean {
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

/**
 * Calls every contract route (WebSocket upgrades aside) three times: without a token, with a
 * viewer-role API token and with the owner's token. Path parameters are ids created for the walk
 * where the route names an organization, project or API token, a dummy id otherwise; bodies are
 * `{}`. Routes of services not deployed are left out. A route added to the contracts later is
 * walked without a change here.
 */
export async function walkEveryRoute(
  baseUrl: string,
  ownerToken: string,
  deployed: ReadonlySet<ServiceName>,
): Promise<WalkedCall[]> {
  const calls: WalkedCall[] = [];
  const record = (
    label: string,
    method: string,
    path: string,
    r: { status: number; requestId: string },
    orgId?: string,
  ) => {
    expect(r.requestId, `${method} ${path}`).not.toBe("");
    calls.push({ label, method, path, status: r.status, requestId: r.requestId, ...(orgId ? { orgId } : {}) });
  };

  const org = await send(baseUrl, "POST", "/v1/orgs", ownerToken, { name: "Audit walk" });
  expect(org.status).toBe(201);
  const orgId = org.json.id as string;
  record("setup", "POST", "/v1/orgs", org, orgId);
  const project = await send(baseUrl, "POST", `/v1/orgs/${orgId}/projects`, ownerToken, { name: "walk" });
  expect(project.status).toBe(201);
  const projectId = project.json.id as string;
  record("setup", "POST", `/v1/orgs/${orgId}/projects`, project, orgId);
  const viewer = await send(baseUrl, "POST", `/v1/orgs/${orgId}/api-tokens`, ownerToken, { name: "v", role: "viewer" });
  expect(viewer.status).toBe(201);
  record("setup", "POST", `/v1/orgs/${orgId}/api-tokens`, viewer, orgId);
  const viewerToken = viewer.json.token as string;
  const viewerTokenId = viewer.json.id as string;

  const known: Record<string, string> = { orgId, projectId, tokenId: viewerTokenId, region: "us-east-1", path: "v1/x" };
  const fill = (route: ContractRoute) =>
    route.path.replaceAll(/\{([^}]+)\}/g, (_, name: string) => known[name] ?? `${name.replace(/Id$/, "")}_walk0`);
  // The org of a call's record is known when the path names the walk's org, project or token.
  const orgOf = (route: ContractRoute) => (/\{(orgId|projectId|tokenId)\}/.test(route.path) ? orgId : undefined);
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
      record(label, method, path, r, r.status === 401 ? undefined : orgOf(route));
    }
  }
  return calls;
}

function rank(route: ContractRoute): number {
  if (route.method.toUpperCase() !== "DELETE") return 0;
  return route.path === "/v1/orgs/{orgId}" ? 3 : route.path === "/v1/projects/{projectId}" ? 2 : 1;
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
