import { minOrgRole, newId, type Organization, type Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { sql } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import type { TenancyContext } from "../context.ts";
import { page, toOrganization } from "./serialize.ts";

/** Creates an organization with the caller as its owner. */
export async function createOrganization(
  ctx: TenancyContext,
  principal: Principal,
  input: { name: string },
): Promise<Organization> {
  const actor = actorOf(principal);
  if (!actor) throw new ProblemError("forbidden", { detail: "Only users and their API tokens create organizations" });
  if (actor.orgId) {
    throw new ProblemError("forbidden", { detail: "A token bound to an organization cannot create organizations" });
  }
  const org = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("orgs")
      .values({ id: newId("org"), name: input.name, updated_at: new Date() })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx.insertInto("org_members").values({ org_id: row.id, user_id: actor.userId, role: "owner" }).execute();
    return row;
  });
  return toOrganization(org, actor.cap ? minOrgRole("owner", actor.cap) : "owner");
}

export async function listOrganizations(
  ctx: TenancyContext,
  principal: Principal,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ items: Organization[]; nextCursor?: string }> {
  const actor = actorOf(principal);
  if (!actor) return { items: [] };
  let q = ctx.db
    .selectFrom("orgs as o")
    .innerJoin("org_members as m", "m.org_id", "o.id")
    .selectAll("o")
    .select("m.role as member_role")
    .where("m.user_id", "=", actor.userId)
    .orderBy("o.id")
    .limit(query.limit + 1);
  if (actor.orgId) q = q.where("o.id", "=", actor.orgId);
  if (query.cursor) q = q.where("o.id", ">", query.cursor);
  const rows = await q.execute();
  const result = page(rows, query.limit);
  return {
    items: result.items.map((r) => toOrganization(r, actor.cap ? minOrgRole(r.member_role, actor.cap) : r.member_role)),
    ...(result.nextCursor ? { nextCursor: result.nextCursor } : {}),
  };
}

export async function getOrganizationRow(ctx: TenancyContext, orgId: string) {
  const row = await ctx.db.selectFrom("orgs").selectAll().where("id", "=", orgId).executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Organization ${orgId} was not found` });
  return row;
}

export async function updateOrganization(
  ctx: TenancyContext,
  orgId: string,
  input: { name?: string | undefined },
): Promise<Organization> {
  const row = await ctx.db
    .updateTable("orgs")
    .set({ ...(input.name !== undefined ? { name: input.name } : {}), updated_at: sql<Date>`now()` })
    .where("id", "=", orgId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new ProblemError("not-found", { detail: `Organization ${orgId} was not found` });
  return toOrganization(row);
}

/** Deletes the organization; teams, projects, keys, invitations, memberships and tokens go with it. */
export async function deleteOrganization(ctx: TenancyContext, orgId: string): Promise<void> {
  await ctx.db.deleteFrom("orgs").where("id", "=", orgId).execute();
}
