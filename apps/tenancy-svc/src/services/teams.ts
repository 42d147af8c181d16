import { newId, type ProjectRole, type Team } from "@agentplane/contracts";
import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { sql } from "kysely";
import type { TenancyContext } from "../context.ts";
import { enforceOrgLimit } from "./object-limits.ts";
import { changedFields, iso, page, toTeam } from "./serialize.ts";
import { shareMembership, shareRowOfOrg } from "./share-locks.ts";

function teamNotFound(teamId: string): ProblemError {
  return new ProblemError("not-found", { detail: `Team ${teamId} was not found` });
}

/** The org of a team, so the route can authorize against it; unknown teams answer 404. */
export async function teamOrgId(ctx: TenancyContext, teamId: string): Promise<string> {
  const row = await ctx.db.selectFrom("teams").select("org_id").where("id", "=", teamId).executeTakeFirst();
  if (!row) throw teamNotFound(teamId);
  return row.org_id;
}

export async function createTeam(
  ctx: TenancyContext,
  caller: Caller,
  input: { name: string; description?: string | undefined },
): Promise<Team> {
  const { orgId } = caller;
  const row = await withDomainEvents(ctx, async (trx) => {
    await enforceOrgLimit(ctx, trx, "teams", orgId);
    const row = await trx
      .insertInto("teams")
      .values({
        id: newId("team"),
        org_id: orgId,
        name: input.name,
        description: input.description ?? null,
        updated_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.created",
      orgId,
      targetType: "team",
      targetId: row.id,
      details: { name: input.name },
      requestId: caller.requestId,
    });
    return row;
  });
  return { ...toTeam(row), members: [], projects: [] };
}

export async function listTeams(
  ctx: TenancyContext,
  caller: Caller,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: Team[]; nextCursor?: string }> {
  let q = ctx.db
    .selectFrom("teams")
    .selectAll()
    .where("org_id", "=", caller.orgId)
    .orderBy("id")
    .limit(query.limit + 1);
  if (query.cursor) q = q.where("id", ">", query.cursor);
  const result = page(await q.execute(), query.limit);
  return {
    items: result.items.map(toTeam),
    ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}),
  };
}

export async function getTeam(ctx: TenancyContext, caller: Caller, input: { teamId: string }): Promise<Team> {
  const { teamId } = input;
  const row = await ctx.db
    .selectFrom("teams")
    .selectAll()
    .where("id", "=", teamId)
    .where("org_id", "=", caller.orgId)
    .executeTakeFirst();
  if (!row) throw teamNotFound(teamId);
  const members = await ctx.db
    .selectFrom("team_members")
    .select(["user_id", "created_at"])
    .where("team_id", "=", teamId)
    .orderBy("user_id")
    .execute();
  const projects = await ctx.db
    .selectFrom("team_projects")
    .select(["project_id", "role"])
    .where("team_id", "=", teamId)
    .orderBy("project_id")
    .execute();
  return {
    ...toTeam(row),
    members: members.map((m) => ({ userId: m.user_id, addedAt: iso(m.created_at) })),
    projects: projects.map((p) => ({ projectId: p.project_id, role: p.role })),
  };
}

export async function updateTeam(
  ctx: TenancyContext,
  caller: Caller,
  input: { teamId: string; name?: string | undefined; description?: string | undefined },
): Promise<Team> {
  const { orgId } = caller;
  const { teamId } = input;
  const row = await withDomainEvents(ctx, async (trx) => {
    const current = await trx
      .selectFrom("teams")
      .selectAll()
      .where("id", "=", teamId)
      .where("org_id", "=", orgId)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw teamNotFound(teamId);
    const fields = changedFields(input, current, "name", "description");
    // A patch that changes nothing (an empty one, or the values the team has) leaves the team as
    // it is: no event, and updatedAt keeps the time of the last real change.
    if (fields.length === 0) return current;
    const row = await trx
      .updateTable("teams")
      .set({
        ...(fields.includes("name") ? { name: input.name } : {}),
        ...(fields.includes("description") ? { description: input.description } : {}),
        updated_at: sql<Date>`now()`,
      })
      .where("id", "=", teamId)
      .where("org_id", "=", orgId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw teamNotFound(teamId);
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.updated",
      orgId,
      targetType: "team",
      targetId: teamId,
      details: { fields },
      requestId: caller.requestId,
    });
    return row;
  });
  return toTeam(row);
}

export async function deleteTeam(ctx: TenancyContext, caller: Caller, input: { teamId: string }): Promise<void> {
  const { orgId } = caller;
  const { teamId } = input;
  await withDomainEvents(ctx, async (trx) => {
    const row = await trx
      .deleteFrom("teams")
      .where("id", "=", teamId)
      .where("org_id", "=", orgId)
      .returning("name")
      .executeTakeFirst();
    if (!row) return;
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.deleted",
      orgId,
      targetType: "team",
      targetId: teamId,
      details: { name: row.name },
      requestId: caller.requestId,
    });
  });
}

/**
 * Only members of the team's organization can join it; anyone else is not found. The team and the
 * membership are locked until the insert commits: a removal from the organization (which takes the
 * person out of its teams) or a deletion of the team waits, rather than leaving a member of no
 * organization in the team or failing the insert.
 */
export async function addTeamMember(ctx: TenancyContext, caller: Caller, input: { teamId: string; userId: string }) {
  const { orgId } = caller;
  const { teamId, userId } = input;
  await withDomainEvents(ctx, async (trx) => {
    await shareRowOfOrg(trx, "teams", orgId, teamId, `Team ${teamId} was not found`);
    await shareMembership(trx, orgId, userId, `User ${userId} is not a member of the organization`);
    const added = await trx
      .insertInto("team_members")
      .values({ team_id: teamId, user_id: userId })
      .onConflict((oc) => oc.columns(["team_id", "user_id"]).doNothing())
      .returning("user_id")
      .executeTakeFirst();
    // Adding someone already in the team changes nothing and records nothing.
    if (!added) return;
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.member_added",
      orgId,
      targetType: "team",
      targetId: teamId,
      details: { userId },
      requestId: caller.requestId,
    });
  });
  return { teamId, userId };
}

export async function removeTeamMember(
  ctx: TenancyContext,
  caller: Caller,
  input: { teamId: string; userId: string },
): Promise<void> {
  const { teamId, userId } = input;
  await withDomainEvents(ctx, async (trx) => {
    const removed = await trx
      .deleteFrom("team_members")
      .where("team_id", "=", teamId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) {
      throw new ProblemError("not-found", { detail: `User ${userId} is not in team ${teamId}` });
    }
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.member_removed",
      orgId: caller.orgId,
      targetType: "team",
      targetId: teamId,
      details: { userId },
      requestId: caller.requestId,
    });
  });
}

/** Grants a project role to the team; the project must belong to the team's organization. */
export async function grantTeamProject(
  ctx: TenancyContext,
  caller: Caller,
  input: { teamId: string; projectId: string; role: ProjectRole },
) {
  const { orgId } = caller;
  const { teamId, projectId, role } = input;
  await withDomainEvents(ctx, async (trx) => {
    // Both stay locked until the grant is stored: deleting either waits (and takes the grant with
    // it) or has already happened and is a 404, never a failed insert.
    await shareRowOfOrg(trx, "teams", orgId, teamId, `Team ${teamId} was not found`);
    await shareRowOfOrg(trx, "projects", orgId, projectId, `Project ${projectId} was not found`);
    const previous = await trx
      .selectFrom("team_projects")
      .select("role")
      .where("team_id", "=", teamId)
      .where("project_id", "=", projectId)
      .forUpdate()
      .executeTakeFirst();
    // Granting the role the team has changes nothing and records nothing.
    if (previous?.role === role) return;
    await trx
      .insertInto("team_projects")
      .values({ team_id: teamId, project_id: projectId, role })
      .onConflict((oc) => oc.columns(["team_id", "project_id"]).doUpdateSet({ role }))
      .execute();
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.project_granted",
      orgId,
      projectId,
      targetType: "team",
      targetId: teamId,
      details: { role, ...(previous ? { previousRole: previous.role } : {}) },
      requestId: caller.requestId,
    });
  });
  return { teamId, projectId, role };
}

export async function revokeTeamProject(
  ctx: TenancyContext,
  caller: Caller,
  input: { teamId: string; projectId: string },
): Promise<void> {
  const { teamId, projectId } = input;
  await withDomainEvents(ctx, async (trx) => {
    const removed = await trx
      .deleteFrom("team_projects")
      .where("team_id", "=", teamId)
      .where("project_id", "=", projectId)
      .returning("role")
      .executeTakeFirst();
    if (!removed) {
      throw new ProblemError("not-found", { detail: `Team ${teamId} has no access to project ${projectId}` });
    }
    await recordDomainEvent(ctx, trx, caller.principal, {
      action: "team.project_revoked",
      orgId: caller.orgId,
      projectId,
      targetType: "team",
      targetId: teamId,
      details: { role: removed.role },
      requestId: caller.requestId,
    });
  });
}
