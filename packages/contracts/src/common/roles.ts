import { z } from "@hono/zod-openapi";

export const ORG_ROLES = ["owner", "admin", "member", "viewer"] as const;
export const PROJECT_ROLES = ["admin", "developer", "viewer"] as const;

export const OrgRoleSchema = z.enum(ORG_ROLES).describe("A role in the organization").openapi("OrgRole");
export const ProjectRoleSchema = z.enum(PROJECT_ROLES).describe("A role on a project").openapi("ProjectRole");
export type OrgRole = (typeof ORG_ROLES)[number];
export type ProjectRole = (typeof PROJECT_ROLES)[number];

const ORG_RANK: Record<OrgRole, number> = { owner: 4, admin: 3, member: 2, viewer: 1 };
const PROJECT_RANK: Record<ProjectRole, number> = { admin: 3, developer: 2, viewer: 1 };

export function orgRoleAtLeast(role: OrgRole | undefined, min: OrgRole): boolean {
  return role !== undefined && ORG_RANK[role] >= ORG_RANK[min];
}

export function projectRoleAtLeast(role: ProjectRole | undefined, min: ProjectRole): boolean {
  return role !== undefined && PROJECT_RANK[role] >= PROJECT_RANK[min];
}

export function minOrgRole(a: OrgRole, b: OrgRole): OrgRole {
  return ORG_RANK[a] <= ORG_RANK[b] ? a : b;
}

export function maxProjectRole(a: ProjectRole | undefined, b: ProjectRole | undefined): ProjectRole | undefined {
  if (!a) return b;
  if (!b) return a;
  return PROJECT_RANK[a] >= PROJECT_RANK[b] ? a : b;
}

export function minProjectRole(a: ProjectRole, b: ProjectRole): ProjectRole {
  return PROJECT_RANK[a] <= PROJECT_RANK[b] ? a : b;
}

/** The project role an organization role carries in every project of the organization. */
export function implicitProjectRole(orgRole: OrgRole): ProjectRole | undefined {
  if (orgRole === "owner" || orgRole === "admin") return "admin";
  if (orgRole === "member" || orgRole === "viewer") return "viewer";
  return undefined;
}
