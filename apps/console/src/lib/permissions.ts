import { PERMISSIONS, type Permission } from "@agentplane/contracts/permissions";

/**
 * What a role may do, from the permission matrix the API enforces (the same table), so a page can
 * disable a control and say why instead of letting the click fail.
 */
export type OrgRole = "owner" | "admin" | "member" | "viewer";
export type ProjectRole = "admin" | "developer" | "viewer";

const ORG_RANK: Record<OrgRole, number> = { owner: 4, admin: 3, member: 2, viewer: 1 };
const PROJECT_RANK: Record<ProjectRole, number> = { admin: 3, developer: 2, viewer: 1 };

/** The project role an organization role carries in every project (admins administer all). */
export function projectRoleOf(orgRole: OrgRole, granted?: ProjectRole): ProjectRole {
  const implicit: ProjectRole = orgRole === "owner" || orgRole === "admin" ? "admin" : "viewer";
  if (!granted) return implicit;
  return PROJECT_RANK[granted] >= PROJECT_RANK[implicit] ? granted : implicit;
}

export interface Allowance {
  allowed: boolean;
  /** Why not, in words a person reads next to the disabled control. */
  reason?: string;
}

/**
 * Whether `role` may use `permission`. A role with neither part is one not known yet (the pages'
 * role hooks answer so while /v1/auth/me and the project load): the control waits, and says so
 * rather than naming a role the person does not have.
 */
export function allows(permission: Permission, role: { org?: OrgRole; project?: ProjectRole }): Allowance {
  if (role.org === undefined && role.project === undefined) return { allowed: false, reason: "Checking your role…" };
  const rule = PERMISSIONS[permission];
  if (rule.scope === "org") {
    const min = rule.minRole as OrgRole;
    if (role.org && ORG_RANK[role.org] >= ORG_RANK[min]) return { allowed: true };
    return {
      allowed: false,
      reason: `Needs the ${min} role in the organization (you are ${role.org ?? "not a member"})`,
    };
  }
  const min = rule.minRole as ProjectRole;
  if (role.project && PROJECT_RANK[role.project] >= PROJECT_RANK[min]) return { allowed: true };
  return {
    allowed: false,
    reason: `Needs the ${min} role on the project (you are ${role.project ?? "not a project member"})`,
  };
}

/** The permissions of the organization scope this role lacks, with their descriptions. */
export function missingOrgPermissions(role: OrgRole): { permission: Permission; description: string; needs: string }[] {
  return (Object.entries(PERMISSIONS) as [Permission, (typeof PERMISSIONS)[Permission]][])
    .filter(([, rule]) => rule.scope === "org" && ORG_RANK[role] < ORG_RANK[rule.minRole as OrgRole])
    .map(([permission, rule]) => ({ permission, description: rule.description, needs: rule.minRole }));
}

export const ORG_ROLES: OrgRole[] = ["owner", "admin", "member", "viewer"];

/** Roles a person of `role` may hand out (a token or invitation never above its creator). */
export function grantableRoles(role: OrgRole): OrgRole[] {
  return ORG_ROLES.filter((r) => ORG_RANK[r] <= ORG_RANK[role]);
}
