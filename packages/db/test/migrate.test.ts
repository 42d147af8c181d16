import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, type MigrationList, migrateToLatest } from "../src/index.ts";
import { databaseTargets } from "../src/testing.ts";

const migrations: MigrationList = {
  "0001_items": {
    async up(db) {
      await db.schema
        .createTable("items")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("n", "bigint", (c) => c.notNull())
        .execute();
    },
  },
  "0002_items_label": {
    async up(db) {
      await db.schema.alterTable("items").addColumn("label", "text").execute();
    },
  },
};

interface Items {
  items: { id: string; n: number; label: string | null };
}

for (const target of await databaseTargets()) {
  describe.skipIf(!target.available)(`migrations on ${target.name}${target.reason}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ database, cleanup } = await target.open());
    });
    afterAll(() => cleanup());

    it("applies every migration once, in the service's own schema, even when replicas race", async () => {
      const runs = await Promise.all([
        migrateToLatest(database, "svc_a", migrations),
        migrateToLatest(database, "svc_a", migrations),
        migrateToLatest(database, "svc_a", migrations),
      ]);
      expect(runs.flat().sort()).toEqual(["0001_items", "0002_items_label"]);
      expect(await migrateToLatest(database, "svc_a", migrations)).toEqual([]);
      const tables = await sql<{ table_schema: string }>`
        select table_schema from information_schema.tables where table_name = 'items'`.execute(database.kysely);
      expect(tables.rows.map((r) => r.table_schema)).toEqual(["svc_a"]);
    });

    it("gives each service a schema-qualified view and returns int8 as numbers", async () => {
      await migrateToLatest(database, "svc_b", migrations);
      const a = database.forSchema<Items>("svc_a");
      const b = database.forSchema<Items>("svc_b");
      await a.insertInto("items").values({ id: "x", n: 9_007_199_254, label: null }).execute();
      expect(await b.selectFrom("items").selectAll().execute()).toEqual([]);
      const row = await a.selectFrom("items").selectAll().executeTakeFirstOrThrow();
      expect(row.n).toBe(9_007_199_254);
    });

    it("rolls back a failing migration and reports its name", async () => {
      const broken: MigrationList = {
        ...migrations,
        "0003_broken": {
          async up(db) {
            await db.schema.createTable("half").addColumn("id", "text").execute();
            await sql`select * from no_such_table`.execute(db);
          },
        },
      };
      await expect(migrateToLatest(database, "svc_c", broken)).rejects.toThrow(/0003_broken/);
      const half = await sql<{ n: number }>`
        select count(*)::int as n from information_schema.tables where table_schema = 'svc_c' and table_name = 'half'`.execute(
        database.kysely,
      );
      expect(half.rows[0]?.n).toBe(0);
    });
  });
}
