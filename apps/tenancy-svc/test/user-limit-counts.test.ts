import { type Database, openDatabase } from "@agentplane/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startActivated, stopTenancies } from "./fixtures/harness.ts";

// The counts the per-user limits take on every create go through an index on the user, never a
// scan of every user's rows. With a handful of rows the planner scans; with scans off it shows
// the index can serve.
describe("per-user limit counts (PGlite)", () => {
  let database: Database;

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    await startActivated(database);
  });
  afterAll(async () => {
    await stopTenancies();
    await database?.close();
  });

  async function plan(query: ReturnType<typeof sql>): Promise<string> {
    return database.kysely.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const rows = await sql<{ "QUERY PLAN": string }>`explain (costs off) ${query}`.execute(trx);
      return rows.rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
  }

  it.each([
    [
      "personal-api-tokens",
      "api_tokens_personal_idx",
      sql`select count(*) from tenancy.api_tokens where user_id = 'usr_x' and org_id is null
          and revoked_at is null and (expires_at is null or expires_at > now())`,
    ],
    [
      "sessions",
      "browser_sessions_user",
      sql`select count(*) from tenancy.browser_sessions where user_id = 'usr_x'
          and revoked_at is null and expires_at > now()`,
    ],
    [
      "organizations",
      "org_members_user_idx",
      sql`select count(*) from tenancy.org_members where user_id = 'usr_x' and role = 'owner'`,
    ],
  ])("%s counts through %s", async (_, index, query) => {
    expect(await plan(query)).toContain(index);
  });
});
