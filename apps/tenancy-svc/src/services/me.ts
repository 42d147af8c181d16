import { type Me, minOrgRole, type OrgRole } from "@agentplane/contracts";
import type { Requester } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import { actorOf } from "../authz/local-authorizer.ts";
import type { TenancyContext } from "../context.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { getUser } from "./users.ts";

/** Who the caller is, with the organizations it acts in and its role in each. */
export async function getMe(ctx: TenancyContext, caller: Requester): Promise<Me> {
  const { principal } = caller;
  const me: Me = {
    type: principal.type,
    id: principal.id,
    ...(principal.displayName ? { displayName: principal.displayName } : {}),
    organizations: [],
    ...(principal.projectId ? { projectId: principal.projectId } : {}),
    ...(principal.sandboxId ? { sandboxId: principal.sandboxId } : {}),
  };
  const actor = actorOf(principal);
  if (actor) {
    const user = await getUser(ctx.db, actor.userId);
    if (user?.email) me.email = user.email;
    if (principal.type === "api_token") me.userId = actor.userId;
    const rows = await organizationsOfUser(ctx.db, actor.userId, actor.orgId);
    me.organizations = rows.map((r) => ({
      id: r.id,
      name: r.name,
      role: actor.cap ? minOrgRole(r.role, actor.cap) : r.role,
    }));
  } else if (principal.type === "cluster" && principal.projectId) {
    const org = await organizationOfProject(ctx.db, principal.projectId);
    // A cluster acts in its project's organization, read-only.
    if (org) me.organizations = [{ id: org.id, name: org.name, role: "viewer" }];
  }
  return me;
}

/** The organizations a user is a member of (only `orgId` when given), with the user's role in each. */
async function organizationsOfUser(
  db: Kysely<TenancyDatabase>,
  userId: string,
  orgId?: string,
): Promise<{ id: string; name: string; role: OrgRole }[]> {
  let q = db
    .selectFrom("orgs as o")
    .innerJoin("org_members as m", "m.org_id", "o.id")
    .select(["o.id", "o.name", "m.role"])
    .where("m.user_id", "=", userId)
    .orderBy("o.id");
  if (orgId) q = q.where("o.id", "=", orgId);
  return (await q.execute()) as { id: string; name: string; role: OrgRole }[];
}

/** The organization a project belongs to. */
function organizationOfProject(db: Kysely<TenancyDatabase>, projectId: string) {
  return db
    .selectFrom("projects as p")
    .innerJoin("orgs as o", "o.id", "p.org_id")
    .select(["o.id", "o.name"])
    .where("p.id", "=", projectId)
    .executeTakeFirst();
}
