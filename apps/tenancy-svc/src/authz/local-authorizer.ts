import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  implicitProjectRole,
  maxProjectRole,
  minOrgRole,
  minProjectRole,
  type OrgRole,
  orgRoleAtLeast,
  PERMISSIONS,
  type Permission,
  type Principal,
  type ProjectRole,
  projectRoleAtLeast,
} from "@agentplane/contracts";
import { type Authorizer, noteDecision } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { TenancyDatabase } from "../db/schema.ts";

/** The user a principal acts for, with the restrictions of its token. */
export interface Actor {
  userId: string;
  /** Role cap of an API token. */
  cap?: OrgRole;
  /** An API token bound to one organization. */
  orgId?: string;
  /** An API token restricted to one project. */
  projectId?: string;
}

/** Users act for themselves; API tokens act for their creator within the token's restrictions. */
export function actorOf(principal: Principal): Actor | undefined {
  if (principal.type === "user") return { userId: principal.id };
  if (principal.type === "api_token" && principal.userId) {
    return {
      userId: principal.userId,
      ...(principal.role ? { cap: principal.role } : {}),
      ...(principal.orgId ? { orgId: principal.orgId } : {}),
      ...(principal.projectId ? { projectId: principal.projectId } : {}),
    };
  }
  return undefined;
}

/**
 * The most a token of this role cap may do on a project. A member-role token keeps developer
 * access its creator holds (through a team or a direct grant); viewers stay viewers.
 */
export function tokenProjectCap(cap: OrgRole): ProjectRole {
  if (cap === "owner" || cap === "admin") return "admin";
  if (cap === "member") return "developer";
  return "viewer";
}

/** Org-scoped permissions a project-restricted token keeps: reading the org and listing (its) projects. */
const PROJECT_TOKEN_ORG_PERMISSIONS: ReadonlySet<string> = new Set(["org:read", "projects:list"]);

const NOT_FOUND: AuthorizeResponse = { decision: "not_found" };

function isPermission(value: string): value is Permission {
  return Object.hasOwn(PERMISSIONS, value);
}

/** Answers authorization questions from the tenancy tables (no cache: tenancy owns the truth). */
export class LocalAuthorizer implements Authorizer {
  private readonly db: Kysely<TenancyDatabase>;

  constructor(db: Kysely<TenancyDatabase>) {
    this.db = db;
  }

  async check(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    // The organization decided on is the one the asking request acts in (for its audit record).
    return noteDecision(await this.decide(request));
  }

  private async decide(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const decision = await this.decideByRole(request);
    // A scoped token uses only the permissions it names: what its role would allow beyond them is
    // forbidden (still naming the org and project it can see, so callers answer 403, not 404).
    const { principal, permission } = request;
    if (decision.decision === "allowed" && principal.type === "api_token" && principal.scopes) {
      if (!principal.scopes.includes(permission)) return { ...decision, decision: "forbidden" };
    }
    return decision;
  }

  private async decideByRole(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const { principal, permission } = request;
    if (!isPermission(permission)) return { decision: "forbidden" };
    const rule = PERMISSIONS[permission];
    if (rule.scope === "org") {
      if (!request.orgId) return NOT_FOUND;
      const orgRole = await this.orgRoleOf(principal, request.orgId);
      if (!orgRole) return NOT_FOUND;
      const base = { orgId: request.orgId, orgRole };
      if (principal.projectId && principal.type === "api_token" && !PROJECT_TOKEN_ORG_PERMISSIONS.has(permission)) {
        return { decision: "forbidden", ...base };
      }
      return { decision: orgRoleAtLeast(orgRole, rule.minRole as OrgRole) ? "allowed" : "forbidden", ...base };
    }
    if (!request.projectId) return NOT_FOUND;
    const access = await this.projectAccess(principal, request.projectId);
    if (!access) return NOT_FOUND;
    const allowed = projectRoleAtLeast(access.projectRole, rule.minRole as ProjectRole);
    return {
      decision: allowed ? "allowed" : "forbidden",
      orgId: access.orgId,
      projectId: request.projectId,
      ...(access.orgRole ? { orgRole: access.orgRole } : {}),
      ...(access.projectRole ? { projectRole: access.projectRole } : {}),
      ...(access.teamIds ? { teamIds: access.teamIds } : {}),
    };
  }

  /** The principal's effective role in an organization, or undefined when it cannot see it. */
  async orgRoleOf(principal: Principal, orgId: string): Promise<OrgRole | undefined> {
    const actor = actorOf(principal);
    if (!actor) return undefined;
    if (actor.orgId && actor.orgId !== orgId) return undefined;
    const row = await this.db
      .selectFrom("org_members")
      .select("role")
      .where("org_id", "=", orgId)
      .where("user_id", "=", actor.userId)
      .executeTakeFirst();
    if (!row) return undefined;
    return actor.cap ? minOrgRole(row.role, actor.cap) : row.role;
  }

  /** The principal's effective role on a project, or undefined when it cannot see the project. */
  async projectAccess(
    principal: Principal,
    projectId: string,
  ): Promise<{ orgId: string; orgRole?: OrgRole; projectRole?: ProjectRole; teamIds?: string[] } | undefined> {
    const project = await this.db
      .selectFrom("projects")
      .select(["id", "org_id"])
      .where("id", "=", projectId)
      .executeTakeFirst();
    if (!project) return undefined;
    // A cluster sees its own project, read-only; sandboxes and services see nothing here.
    if (principal.type === "cluster") {
      return principal.projectId === projectId ? { orgId: project.org_id, projectRole: "viewer" } : undefined;
    }
    const actor = actorOf(principal);
    if (!actor) return undefined;
    if (actor.orgId && actor.orgId !== project.org_id) return undefined;
    if (actor.projectId && actor.projectId !== projectId) return undefined;
    const member = await this.db
      .selectFrom("org_members")
      .select("role")
      .where("org_id", "=", project.org_id)
      .where("user_id", "=", actor.userId)
      .executeTakeFirst();
    if (!member) return undefined;
    const direct = await this.db
      .selectFrom("project_members")
      .select("role")
      .where("project_id", "=", projectId)
      .where("user_id", "=", actor.userId)
      .executeTakeFirst();
    // Every team of the organization the user is in, with the team's grant on this project if any.
    const teams = await this.db
      .selectFrom("team_members as tm")
      .innerJoin("teams as t", "t.id", "tm.team_id")
      .leftJoin("team_projects as tp", (join) =>
        join.onRef("tp.team_id", "=", "tm.team_id").on("tp.project_id", "=", projectId),
      )
      .select(["tm.team_id", "tp.role"])
      .where("tm.user_id", "=", actor.userId)
      .where("t.org_id", "=", project.org_id)
      .orderBy("tm.team_id")
      .execute();
    let role = maxProjectRole(implicitProjectRole(member.role), direct?.role);
    for (const grant of teams) if (grant.role) role = maxProjectRole(role, grant.role);
    const orgRole = actor.cap ? minOrgRole(member.role, actor.cap) : member.role;
    if (role && actor.cap) role = minProjectRole(role, tokenProjectCap(actor.cap));
    return {
      orgId: project.org_id,
      orgRole,
      ...(role ? { projectRole: role } : {}),
      teamIds: teams.map((t) => t.team_id),
    };
  }
}
