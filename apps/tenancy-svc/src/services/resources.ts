import { ID_PREFIXES } from "@agentplane/contracts";
import type { Kysely } from "kysely";
import type { TenancyDatabase } from "../db/schema.ts";

const TABLE_OF_PREFIX = {
  [ID_PREFIXES.project]: "projects",
  [ID_PREFIXES.team]: "teams",
  [ID_PREFIXES.apiToken]: "api_tokens",
  [ID_PREFIXES.invitation]: "invitations",
  [ID_PREFIXES.org]: "orgs",
} as const;

/** The organization a tenancy resource belongs to, by its id. `undefined`: no such resource; `null`: it belongs to none. */
export async function orgOfResource(db: Kysely<TenancyDatabase>, id: string): Promise<string | null | undefined> {
  const prefix = id.slice(0, id.indexOf("_"));
  const table = (TABLE_OF_PREFIX as Record<string, (typeof TABLE_OF_PREFIX)[keyof typeof TABLE_OF_PREFIX]>)[prefix];
  if (!table) return undefined;
  if (table === "orgs") {
    const org = await db.selectFrom("orgs").select("id").where("id", "=", id).executeTakeFirst();
    return org?.id;
  }
  const row = await db.selectFrom(table).select("org_id").where("id", "=", id).executeTakeFirst();
  return row ? row.org_id : undefined;
}
