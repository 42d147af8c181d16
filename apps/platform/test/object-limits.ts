// The tenant object limits walked through the public API of a running platform (all-in-one or
// distributed): up to the limit, one more, a slot freed by a delete, and a burst of concurrent
// creates at the edge. The platform under test is started with OBJECT_LIMITS = `LIMITS_SETTING`.
import { randomBytes } from "node:crypto";
import { expect } from "vitest";

/** The low limits the suites set through the setting (never by editing the defaults). */
export const LIMIT = 3;
export const LIMITS_SETTING = `connectors=${LIMIT},api-tokens=${LIMIT},policies=${LIMIT},credentials=${LIMIT}`;
/** Every other kind as well, for the suite that walks them all. */
export const ALL_LIMITS_SETTING = `${LIMITS_SETTING},${["projects", "teams", "invitations", "bindings", "clusters", "aws-connections", "sandboxes"].map((k) => `${k}=${LIMIT}`).join(",")}`;

export type Json = Record<string, unknown>;
export interface Answer {
  status: number;
  contentType: string;
  body: Json;
}

export interface LimitedKind {
  kind: string;
  /** How many the holder keeps before the walk (a bootstrapped owner's first organization). */
  preexisting?: number;
  /** Creates object number `i`; answers the created object's id on success. */
  create(i: number): Promise<Answer>;
  remove(id: string): Promise<Answer>;
  /** How many the holder keeps now, as its list shows them. */
  held(): Promise<number>;
  /** Checks a refused create that is not a JSON problem (a page's form); the problem by default. */
  expectRefused?(answer: Answer): void;
}

export async function send(base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get("content-type") ?? "",
    body: text ? (JSON.parse(text) as Json) : {},
  };
}

const SPEC = {
  openapi: "3.0.3",
  info: { title: "limits", version: "1" },
  paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "pong" } } } } },
};

/** A fresh organization and project of the owner, and the four limited kinds held by them. */
export async function limitedKinds(base: string, ownerToken: string): Promise<LimitedKind[]> {
  const call = (method: string, path: string, body?: unknown) => send(base, ownerToken, method, path, body);
  const org = await call("POST", "/v1/orgs", { name: `limits-${randomBytes(3).toString("hex")}` });
  expect(org.status, JSON.stringify(org.body)).toBe(201);
  const orgId = org.body.id as string;
  const project = await call("POST", `/v1/orgs/${orgId}/projects`, { name: "limits" });
  expect(project.status, JSON.stringify(project.body)).toBe(201);
  const p = project.body.id as string;
  const items = async (path: string) => (await call("GET", `${path}?limit=200`)).body.items as Json[];
  return [
    {
      kind: "connectors",
      create: (i) =>
        call("POST", `/v1/projects/${p}/mcp-servers/http`, {
          name: `api-${i}`,
          spec: SPEC,
          baseUrl: "https://limits.example.test",
        }),
      remove: (id) => call("DELETE", `/v1/mcp-servers/${id}`),
      held: async () => (await items(`/v1/projects/${p}/mcp-servers`)).length,
    },
    {
      kind: "api-tokens",
      create: (i) => call("POST", `/v1/orgs/${orgId}/api-tokens`, { name: `ci-${i}` }),
      remove: (id) => call("DELETE", `/v1/api-tokens/${id}`),
      held: async () => (await items(`/v1/orgs/${orgId}/api-tokens`)).filter((t) => !t.revokedAt).length,
    },
    {
      kind: "policies",
      create: (i) =>
        call("POST", `/v1/projects/${p}/policies`, {
          name: `policy-${i}`,
          cedar: `@id("p${i}") forbid(principal, action == Action::"sandbox:start", resource);`,
        }),
      remove: (id) => call("DELETE", `/v1/projects/${p}/policies/${id}`),
      held: async () => (await items(`/v1/projects/${p}/policies`)).length,
    },
    {
      kind: "credentials",
      create: (i) =>
        call("POST", `/v1/projects/${p}/credentials`, {
          name: `aws-${i}`,
          kind: "aws-keys",
          accessKeyId: "AKIALIMITSLIMITS",
          secretAccessKey: `limits-secret-${i}`,
        }),
      remove: (id) => call("DELETE", `/v1/projects/${p}/credentials/${id}`),
      held: async () => (await items(`/v1/projects/${p}/credentials`)).length,
    },
  ];
}

/**
 * The other limited kinds, each in holders of its own (a fresh organization for projects, a second
 * project holding the policy that bindings name and the credential AWS connections use).
 */
export async function otherLimitedKinds(base: string, ownerToken: string): Promise<LimitedKind[]> {
  const call = (method: string, path: string, body?: unknown) => send(base, ownerToken, method, path, body);
  const newOrg = async () => {
    const org = await call("POST", "/v1/orgs", { name: `limits-${randomBytes(3).toString("hex")}` });
    expect(org.status, JSON.stringify(org.body)).toBe(201);
    return org.body.id as string;
  };
  const [orgId, projectsOrg] = [await newOrg(), await newOrg()];
  const project = await call("POST", `/v1/orgs/${orgId}/projects`, { name: "others" });
  const q = project.body.id as string;
  const policy = await call("POST", `/v1/projects/${q}/policies`, {
    name: "bound",
    cedar: `@id("b") forbid(principal, action == Action::"sandbox:start", resource);`,
  });
  const credential = await call("POST", `/v1/projects/${q}/credentials`, {
    name: "aws",
    kind: "aws-keys",
    accessKeyId: "AKIALIMITSLIMITS",
    secretAccessKey: "limits-secret",
  });
  expect([policy.status, credential.status]).toEqual([201, 201]);
  const items = async (path: string) => (await call("GET", `${path}?limit=200`)).body.items as Json[];
  return [
    {
      kind: "projects",
      create: (i) => call("POST", `/v1/orgs/${projectsOrg}/projects`, { name: `p-${i}` }),
      remove: (id) => call("DELETE", `/v1/projects/${id}`),
      held: async () => (await items(`/v1/orgs/${projectsOrg}/projects`)).length,
    },
    {
      kind: "teams",
      create: (i) => call("POST", `/v1/orgs/${orgId}/teams`, { name: `team-${i}` }),
      remove: (id) => call("DELETE", `/v1/teams/${id}`),
      held: async () => (await items(`/v1/orgs/${orgId}/teams`)).length,
    },
    {
      kind: "invitations",
      create: (i) =>
        call("POST", `/v1/orgs/${orgId}/invitations`, { email: `invitee-${i}@limits.test`, role: "member" }),
      remove: (id) => call("DELETE", `/v1/orgs/${orgId}/invitations/${id}`),
      held: async () => (await items(`/v1/orgs/${orgId}/invitations`)).filter((v) => v.status === "pending").length,
    },
    {
      kind: "bindings",
      create: () => call("POST", `/v1/projects/${q}/policy-bindings`, { policyId: policy.body.id }),
      remove: (id) => call("DELETE", `/v1/projects/${q}/policy-bindings/${id}`),
      held: async () => (await items(`/v1/projects/${q}/policy-bindings`)).length,
    },
    {
      kind: "clusters",
      create: (i) => call("POST", `/v1/projects/${q}/clusters`, { name: `cluster-${i}` }),
      remove: (id) => call("DELETE", `/v1/clusters/${id}`),
      held: async () => (await items(`/v1/projects/${q}/clusters`)).length,
    },
    {
      kind: "aws-connections",
      create: (i) =>
        call("POST", `/v1/projects/${q}/aws-connections`, {
          name: `aws-${i}`,
          credentialId: credential.body.id,
          defaultRegion: "eu-west-1",
        }),
      remove: (id) => call("DELETE", `/v1/aws-connections/${id}`),
      held: async () => (await items(`/v1/projects/${q}/aws-connections`)).length,
    },
    {
      // Stored sandboxes only (created, never started): how many run at once is sandbox-svc's test.
      kind: "sandboxes",
      create: (i) => call("POST", `/v1/projects/${q}/sandboxes`, { name: `box-${i}` }),
      remove: (id) => call("DELETE", `/v1/projects/${q}/sandboxes/${id}`),
      held: async () => (await items(`/v1/projects/${q}/sandboxes`)).length,
    },
  ];
}

export function expectLimitProblem(answer: Answer, kind: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(409);
  expect(answer.contentType).toMatch(/^application\/problem\+json/);
  expect(answer.body.type).toMatch(/\/limit-exceeded$/);
  expect(answer.body).toMatchObject({ kind, limit: LIMIT, setting: "OBJECT_LIMITS" });
  // The detail alone tells a person which limit, how high, and what raises it.
  expect(answer.body.detail).toContain(`${LIMIT}`);
  expect(answer.body.detail).toContain(kind);
  expect(answer.body.detail).toContain(`OBJECT_LIMITS=${kind}=<n>`);
}

/** Up to the limit, one more refused, a delete frees one slot, then a concurrent burst at the edge. */
export async function walkLimit(k: LimitedKind): Promise<void> {
  const refused = k.expectRefused ?? ((answer: Answer) => expectLimitProblem(answer, k.kind));
  const ids: string[] = [];
  for (let i = k.preexisting ?? 0; i < LIMIT; i++) {
    const created = await k.create(i);
    expect(created.status, `${k.kind} #${i}: ${JSON.stringify(created.body)}`).toBe(201);
    ids.push(created.body.id as string);
  }
  refused(await k.create(LIMIT));
  expect(await k.held()).toBe(LIMIT);

  const removed = await k.remove(ids.shift()!);
  expect(removed.status, JSON.stringify(removed.body)).toBe(204);
  const again = await k.create(LIMIT + 1);
  expect(again.status, JSON.stringify(again.body)).toBe(201);
  ids.push(again.body.id as string);
  refused(await k.create(LIMIT + 2));

  // Two slots free, six creates at once: exactly two win, the others get the problem.
  for (const id of ids.splice(0, 2)) expect((await k.remove(id)).status).toBe(204);
  const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => k.create(LIMIT + 10 + i)));
  const won = burst.filter((a) => a.status === 201);
  expect(won.length, JSON.stringify(burst.map((a) => [a.status, a.body.detail]))).toBe(2);
  for (const lost of burst.filter((a) => a.status !== 201)) refused(lost);
  expect(await k.held()).toBe(LIMIT);
}
