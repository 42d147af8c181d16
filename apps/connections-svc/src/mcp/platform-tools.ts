import type { Principal } from "@agentplane/contracts";
import type { ServiceClient } from "@agentplane/service-kit";

/** Clients of the other services, called with the MCP caller's own identity (same RBAC, policy, audit). */
export interface PlatformClients {
  tenancy?: ServiceClient | undefined;
  sandbox?: ServiceClient | undefined;
  governance?: ServiceClient | undefined;
  audit?: ServiceClient | undefined;
}

export interface PlatformToolScope {
  principal: Principal;
  orgId: string;
  projectId?: string;
  projectAdmin: boolean;
  requestId?: string | undefined;
}

export interface PlatformTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Shown only to project (or org) admins. */
  adminOnly?: boolean;
  run(clients: PlatformClients, scope: PlatformToolScope, args: Record<string, unknown>): Promise<unknown>;
}

const str = (description: string) => ({ type: "string", description });
const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
});

function need(client: ServiceClient | undefined, service: string): ServiceClient {
  if (!client) throw new Error(`The ${service} service is not part of this deployment`);
  return client;
}

const call = (client: ServiceClient, scope: PlatformToolScope, method: string, path: string, body?: unknown) =>
  client.request<unknown>(method, path, {
    principal: scope.principal,
    ...(body !== undefined ? { body } : {}),
    ...(scope.requestId ? { requestId: scope.requestId } : {}),
  });

const enc = encodeURIComponent;

/** The platform's own tools on a project's MCP endpoint: each one is a `/v1` call as the caller. */
export const PROJECT_TOOLS: PlatformTool[] = [
  {
    name: "sandboxes_list",
    description: "List the project's sandboxes",
    inputSchema: object({ cursor: str("Cursor from a previous page") }),
    run: (c, s, a) =>
      call(
        need(c.sandbox, "sandbox"),
        s,
        "GET",
        `/v1/projects/${s.projectId}/sandboxes${a.cursor ? `?cursor=${enc(String(a.cursor))}` : ""}`,
      ),
  },
  {
    name: "sandboxes_create",
    description: "Create a sandbox (name, image, command, env, resources, ports; start: true to start it)",
    inputSchema: object(
      {
        name: str("Sandbox name"),
        image: str("Image"),
        start: { type: "boolean" },
        command: { type: ["string", "array"], items: { type: "string" } },
        env: { type: "object", additionalProperties: { type: "string" } },
      },
      ["name"],
    ),
    run: (c, s, a) => call(need(c.sandbox, "sandbox"), s, "POST", `/v1/projects/${s.projectId}/sandboxes`, a),
  },
  {
    name: "sandboxes_start",
    description: "Start a sandbox",
    inputSchema: object({ sandboxId: str("Sandbox id") }, ["sandboxId"]),
    run: (c, s, a) =>
      call(
        need(c.sandbox, "sandbox"),
        s,
        "POST",
        `/v1/projects/${s.projectId}/sandboxes/${enc(String(a.sandboxId))}/start`,
      ),
  },
  {
    name: "sandboxes_stop",
    description: "Stop a sandbox",
    inputSchema: object({ sandboxId: str("Sandbox id") }, ["sandboxId"]),
    run: (c, s, a) =>
      call(
        need(c.sandbox, "sandbox"),
        s,
        "POST",
        `/v1/projects/${s.projectId}/sandboxes/${enc(String(a.sandboxId))}/stop`,
      ),
  },
  {
    name: "sandboxes_exec",
    description: "Run a shell command in a sandbox and return its output and exit code",
    inputSchema: object(
      {
        sandboxId: str("Sandbox id"),
        command: { type: ["string", "array"], items: { type: "string" } },
        cwd: str("Working directory (absolute)"),
        timeoutMs: { type: "integer", minimum: 1 },
      },
      ["sandboxId", "command"],
    ),
    run: (c, s, a) => call(need(c.sandbox, "sandbox"), s, "POST", "/v1/shell/exec", { ...a, projectId: s.projectId }),
  },
  {
    name: "sandboxes_effective_policy",
    description: "The policies in effect for a sandbox",
    inputSchema: object({ sandboxId: str("Sandbox id") }, ["sandboxId"]),
    run: (c, s, a) =>
      call(
        need(c.governance, "governance"),
        s,
        "GET",
        `/v1/projects/${s.projectId}/sandboxes/${enc(String(a.sandboxId))}/effective-policy`,
      ),
  },
  {
    name: "audit_trail",
    description: "Recent audit records of the organization (admins)",
    adminOnly: true,
    inputSchema: object({ limit: { type: "integer", minimum: 1, maximum: 200 }, cursor: str("Cursor") }),
    run: (c, s, a) => {
      const query = new URLSearchParams();
      if (a.limit) query.set("limit", String(a.limit));
      if (a.cursor) query.set("cursor", String(a.cursor));
      return call(need(c.audit, "audit"), s, "GET", `/v1/orgs/${s.orgId}/audit-trail${query.size ? `?${query}` : ""}`);
    },
  },
];

/** Org tools on the organization-scoped endpoint. */
export const ORG_TOOLS: PlatformTool[] = [
  {
    name: "projects_list",
    description: "List the organization's projects you can access",
    inputSchema: object({}),
    run: (c, s) => call(need(c.tenancy, "tenancy"), s, "GET", `/v1/orgs/${s.orgId}/projects`),
  },
  {
    name: "members_list",
    description: "List the organization's members",
    inputSchema: object({}),
    run: (c, s) => call(need(c.tenancy, "tenancy"), s, "GET", `/v1/orgs/${s.orgId}/members`),
  },
];
