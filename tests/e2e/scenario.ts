import { expect } from "vitest";

/** JSON over HTTP against a running gateway, with a bearer token when given. */
export function client(baseUrl: string, token?: string) {
  return async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    bearer = token,
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const headers: Record<string, string> = {};
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
  };
}

export interface ScenarioResult {
  orgId: string;
  projectId: string;
  apiToken: string;
}

/**
 * What a newcomer does after getting the owner token: create an organization and a project, read
 * its JWKS, rotate its keys, create an API token and use it.
 */
export async function newcomerScenario(baseUrl: string, ownerToken: string): Promise<ScenarioResult> {
  const call = client(baseUrl, ownerToken);
  const me = await call<{ type: string; id: string }>("GET", "/v1/auth/me");
  expect(me.status).toBe(200);

  const org = await call<{ id: string; name: string }>("POST", "/v1/orgs", { name: "Acme Robotics" });
  expect(org.status).toBe(201);
  const orgId = org.body.id;

  const project = await call<{ id: string }>("POST", `/v1/orgs/${orgId}/projects`, { name: "payments" });
  expect(project.status).toBe(201);
  const projectId = project.body.id;

  const jwks1 = await call<{ keys: { kid: string; alg?: string }[] }>(
    "GET",
    `/v1/projects/${projectId}/.well-known/jwks.json`,
  );
  expect(jwks1.status).toBe(200);
  expect(jwks1.body.keys).toHaveLength(1);

  const rotated = await call("POST", `/v1/projects/${projectId}/rotate-keys`);
  expect(rotated.status).toBe(200);
  const jwks2 = await call<{ keys: { kid: string }[] }>("GET", `/v1/projects/${projectId}/.well-known/jwks.json`);
  expect(jwks2.body.keys).toHaveLength(2);
  expect(jwks2.body.keys.map((k) => k.kid)).toContain(jwks1.body.keys[0]!.kid);

  const created = await call<{ id: string; token: string }>("POST", `/v1/orgs/${orgId}/api-tokens`, {
    name: "ci",
    role: "member",
  });
  expect(created.status).toBe(201);
  expect(created.body.token).toMatch(/^apl_/);

  const asToken = client(baseUrl, created.body.token);
  const tokenMe = await asToken<{ type: string }>("GET", "/v1/auth/me");
  expect(tokenMe.status).toBe(200);
  expect(tokenMe.body.type).toBe("api_token");
  const projects = await asToken<{ items: { id: string }[] }>("GET", `/v1/orgs/${orgId}/projects`);
  expect(projects.status).toBe(200);
  expect(projects.body.items.map((p) => p.id)).toContain(projectId);
  // A member token cannot rotate keys.
  expect((await asToken("POST", `/v1/projects/${projectId}/rotate-keys`)).status).toBe(403);

  const listed = await call<{ items: { id: string; token?: string }[] }>("GET", `/v1/orgs/${orgId}/api-tokens`);
  expect(listed.body.items.some((t) => t.id === created.body.id)).toBe(true);
  expect(JSON.stringify(listed.body)).not.toContain(created.body.token);

  return { orgId, projectId, apiToken: created.body.token };
}
