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
import { pgArray } from "@agentplane/db";
import { type Authorizer, noteDecision } from "@agentplane/service-kit";
import { CompiledQuery, type Kysely } from "kysely";
import { TENANCY_SCHEMA, type TenancyDatabase } from "../db/schema.ts";

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
  async projectAccess(principal: Principal, projectId: string): Promise<ProjectAccess | undefined> {
    return (await this.projectAccessMany(principal, [projectId])).get(projectId);
  }

  /**
   * The principal's effective role on each of these projects, in one round trip whatever their
   * number: the projects it cannot see are left out of the map.
   */
  async projectAccessMany(principal: Principal, projectIds: readonly string[]): Promise<Map<string, ProjectAccess>> {
    const access = new Map<string, ProjectAccess>();
    if (projectIds.length === 0) return access;
    // A cluster sees its own project, read-only; sandboxes and services see nothing here.
    if (principal.type === "cluster") {
      if (!principal.projectId || !projectIds.includes(principal.projectId)) return access;
      const project = await this.db
        .selectFrom("projects")
        .select(["id", "org_id"])
        .where("id", "=", principal.projectId)
        .executeTakeFirst();
      if (project) access.set(project.id, { orgId: project.org_id, projectRole: "viewer" });
      return access;
    }
    const actor = actorOf(principal);
    if (!actor) return access;
    const ids = actor.projectId ? projectIds.filter((id) => id === actor.projectId) : projectIds;
    if (ids.length === 0) return access;
    // One round trip: each project, the user's membership of its organization, a direct grant, and
    // every team of the organization the user is in with the team's grant on the project.
    const { rows } = await this.db.executeQuery<AccessRow>(
      CompiledQuery.raw(PROJECT_ACCESS, [pgArray([...new Set(ids)]), actor.userId]),
    );
    for (const row of rows) {
      const one = accessOf(actor, row);
      if (one) access.set(row.id, one);
    }
    return access;
  }
}

/** A principal's access to one project. */
export interface ProjectAccess {
  orgId: string;
  orgRole?: OrgRole;
  projectRole?: ProjectRole;
  teamIds?: string[];
}

/** The actor's effective role from its access row: the highest grant, lowered to its token's cap. */
function accessOf(actor: Actor, row: AccessRow): ProjectAccess | undefined {
  if (!row.member_role) return undefined;
  if (actor.orgId && actor.orgId !== row.org_id) return undefined;
  const teams = (typeof row.teams === "string" ? JSON.parse(row.teams) : row.teams) as [string, ProjectRole | null][];
  let role = maxProjectRole(implicitProjectRole(row.member_role), row.direct_role ?? undefined);
  for (const [, grant] of teams) if (grant) role = maxProjectRole(role, grant);
  const orgRole = actor.cap ? minOrgRole(row.member_role, actor.cap) : row.member_role;
  if (role && actor.cap) role = minProjectRole(role, tokenProjectCap(actor.cap));
  return {
    orgId: row.org_id,
    orgRole,
    ...(role ? { projectRole: role } : {}),
    teamIds: teams.map(([teamId]) => teamId),
  };
}

interface AccessRow {
  id: string;
  org_id: string;
  member_role: OrgRole | null;
  direct_role: ProjectRole | null;
  /** JSON array of [team id, the team's role on the project or null], ordered by team id. */
  teams: unknown;
}

const PROJECT_ACCESS = `select p.id, p.org_id, m.role as member_role, d.role as direct_role,
    coalesce((
      select json_agg(json_build_array(tm.team_id, tp.role) order by tm.team_id)
      from ${TENANCY_SCHEMA}.team_members tm
      join ${TENANCY_SCHEMA}.teams t on t.id = tm.team_id and t.org_id = p.org_id
      left join ${TENANCY_SCHEMA}.team_projects tp on tp.team_id = tm.team_id and tp.project_id = p.id
      where tm.user_id = $2
    ), '[]') as teams
  from ${TENANCY_SCHEMA}.projects p
  left join ${TENANCY_SCHEMA}.org_members m on m.org_id = p.org_id and m.user_id = $2
  left join ${TENANCY_SCHEMA}.project_members d on d.project_id = p.id and d.user_id = $2
  where p.id = any(cast($1 as text[]))`;
