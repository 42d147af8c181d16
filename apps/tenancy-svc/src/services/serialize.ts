import { isDeepStrictEqual } from "node:util";
import type {
  ApiToken,
  Invitation,
  Member,
  Organization,
  OrgRole,
  Project,
  ProjectRole,
  Team,
} from "@agentplane/contracts";
import type { Selectable } from "kysely";
import type { ApiTokenTable, InvitationTable, OrgTable, ProjectTable, TeamTable, UserTable } from "../db/schema.ts";

export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/**
 * The names of the fields a patch changes: those given a value that differs from the current row's
 * (the fields share their column's name). None means the patch is a no-op.
 */
export function changedFields<K extends string>(
  input: Partial<Record<K, unknown>>,
  current: Record<K, unknown>,
  ...keys: K[]
): K[] {
  return keys.filter((k) => input[k] !== undefined && !isDeepStrictEqual(input[k], current[k]));
}

export function toOrganization(row: Selectable<OrgTable>, role?: OrgRole): Organization {
  return {
    id: row.id,
    name: row.name,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    ...(role ? { role } : {}),
  };
}

export function toProject(row: Selectable<ProjectTable>, role?: ProjectRole): Project {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    labels: row.labels ?? {},
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    ...(role ? { role } : {}),
  };
}

export function toTeam(row: Selectable<TeamTable>): Team {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toMember(
  row: { org_id: string; user_id: string; role: OrgRole; created_at: Date },
  user?: Pick<Selectable<UserTable>, "email" | "display_name">,
): Member {
  return {
    orgId: row.org_id,
    userId: row.user_id,
    role: row.role,
    ...(user?.email ? { email: user.email } : {}),
    ...(user?.display_name ? { displayName: user.display_name } : {}),
    joinedAt: iso(row.created_at),
  };
}

/** The `scopes` column as a list (jsonb arrives parsed or as its text, depending on the driver). */
export function scopesOf(raw: unknown): string[] {
  const list: unknown = typeof raw === "string" ? JSON.parse(raw) : raw;
  return Array.isArray(list) ? list.map(String) : [];
}

export function toApiToken(row: Selectable<ApiTokenTable>): ApiToken {
  return {
    id: row.id,
    ...(row.org_id ? { orgId: row.org_id } : {}),
    userId: row.user_id,
    name: row.name,
    role: row.role,
    ...(row.project_id ? { projectId: row.project_id } : {}),
    ...(row.scopes ? { scopes: scopesOf(row.scopes) as ApiToken["scopes"] } : {}),
    prefix: row.prefix,
    createdAt: iso(row.created_at),
    ...(row.last_used_at ? { lastUsedAt: iso(row.last_used_at) } : {}),
    ...(row.expires_at ? { expiresAt: iso(row.expires_at) } : {}),
    ...(row.revoked_at ? { revokedAt: iso(row.revoked_at) } : {}),
  };
}

export function toInvitation(row: Selectable<InvitationTable>, orgName?: string): Invitation {
  const expired = row.status === "pending" && new Date(row.expires_at).getTime() <= Date.now();
  return {
    id: row.id,
    orgId: row.org_id,
    ...(orgName ? { orgName } : {}),
    email: row.email,
    role: row.role,
    status: expired ? "expired" : row.status,
    invitedBy: row.invited_by,
    expiresAt: iso(row.expires_at),
    createdAt: iso(row.created_at),
  };
}

/** One page by id order (ids are time-sortable): fetch limit + 1 to know whether more follow. */
export function page<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, nextCursor: items[items.length - 1]!.id };
}
