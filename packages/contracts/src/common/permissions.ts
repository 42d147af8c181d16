import type { OrgRole, ProjectRole } from "./roles.ts";

/**
 * The permission matrix: every route declares one permission; the scope says which id it is
 * checked against and the role is the least one that holds it. UI and CLI read this to show it.
 */
export const PERMISSIONS = {
  "org:read": { scope: "org", minRole: "viewer", description: "See the organization" },
  "org:update": { scope: "org", minRole: "admin", description: "Rename or change the organization" },
  "org:delete": { scope: "org", minRole: "owner", description: "Delete the organization" },
  "members:read": { scope: "org", minRole: "viewer", description: "List members and their roles" },
  "members:manage": { scope: "org", minRole: "admin", description: "Change roles, remove members" },
  "teams:read": { scope: "org", minRole: "viewer", description: "List teams and their members" },
  "teams:manage": { scope: "org", minRole: "admin", description: "Create teams, manage membership and access" },
  "projects:list": { scope: "org", minRole: "viewer", description: "List the projects one can see" },
  "projects:create": { scope: "org", minRole: "member", description: "Create projects" },
  "invitations:manage": { scope: "org", minRole: "admin", description: "Invite people, revoke invitations" },
  "api-tokens:manage": { scope: "org", minRole: "member", description: "Create and revoke API tokens" },
  "audit:read": { scope: "org", minRole: "admin", description: "Read the audit trail" },
  "usage:read": { scope: "org", minRole: "admin", description: "Read usage costs" },
  "spending-limits:read": { scope: "org", minRole: "admin", description: "Read spending limits and status" },
  "spending-limits:manage": { scope: "org", minRole: "admin", description: "Create and change spending limits" },
  "policies:read": { scope: "org", minRole: "viewer", description: "Read organization policies" },
  "policies:manage": { scope: "org", minRole: "admin", description: "Manage organization policies and bindings" },
  "project:read": { scope: "project", minRole: "viewer", description: "See the project" },
  "project:update": { scope: "project", minRole: "admin", description: "Change the project" },
  "project:delete": { scope: "project", minRole: "admin", description: "Delete the project" },
  "project:keys:rotate": { scope: "project", minRole: "admin", description: "Rotate the project signing keys" },
  "project:keys:read": { scope: "project", minRole: "viewer", description: "Read the project public keys" },
  "sandboxes:read": { scope: "project", minRole: "viewer", description: "See sandboxes, revisions, sessions" },
  "sandboxes:write": { scope: "project", minRole: "developer", description: "Create, change, start, stop sandboxes" },
  "sandboxes:exec": { scope: "project", minRole: "developer", description: "Run commands in sandboxes" },
  "sandbox-tokens:manage": { scope: "project", minRole: "developer", description: "Mint and revoke sandbox tokens" },
  "llm:invoke": { scope: "project", minRole: "developer", description: "Call models through the inference proxy" },
  "connections:read": { scope: "project", minRole: "viewer", description: "See clusters, connections, connectors" },
  "connections:manage": { scope: "project", minRole: "admin", description: "Manage clusters, connections, connectors" },
  "connectors:call": { scope: "project", minRole: "developer", description: "Call connector tools" },
  "project-policies:manage": { scope: "project", minRole: "admin", description: "Manage project policies" },
  "credentials:manage": { scope: "project", minRole: "admin", description: "Manage project credentials" },
  // The agent runtime the platform fronts at /agent/ (its UI and API belong to one project).
  "agent:read": { scope: "project", minRole: "viewer", description: "Read the agent runtime: threads, settings, runs" },
  "agent:chat": { scope: "project", minRole: "developer", description: "Chat with the agent runtime, stop its turns" },
  "agent:manage": {
    scope: "project",
    minRole: "admin",
    description: "Change the agent runtime's settings, webhooks, schedules and memory",
  },
} as const satisfies Record<
  string,
  | { scope: "org"; minRole: OrgRole; description: string }
  | { scope: "project"; minRole: ProjectRole; description: string }
>;

export type Permission = keyof typeof PERMISSIONS;
/** `authenticated`: any valid token; `public`: no token (installation, health). */
export type RouteAccess = Permission | "authenticated" | "public";

export function permissionScope(permission: Permission): "org" | "project" {
  return PERMISSIONS[permission].scope;
}
