import type { OrgRole } from "@agentplane/contracts";
import type { Kysely } from "kysely";
import type { TenancyDatabase } from "../db/schema.ts";

/** The organizations a user is a member of (only `orgId` when given), with the user's role in each. */
export async function organizationsOfUser(
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
export function organizationOfProject(db: Kysely<TenancyDatabase>, projectId: string) {
  return db
    .selectFrom("projects as p")
    .innerJoin("orgs as o", "o.id", "p.org_id")
    .select(["o.id", "o.name"])
    .where("p.id", "=", projectId)
    .executeTakeFirst();
}
