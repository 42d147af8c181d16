import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, isUniqueViolation } from "../src/index.ts";
import { databaseTargets } from "../src/testing.ts";

for (const target of await databaseTargets()) {
  describe.skipIf(!target.available)(`unique violations on ${target.name}${target.reason}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ database, cleanup } = await target.open());
      await sql`create table keyed (id text primary key)`.execute(database.kysely);
    });
    afterAll(() => cleanup());

    const failure = (run: () => Promise<unknown>) =>
      run().then(
        () => undefined,
        (err: unknown) => err,
      );

    it("tells a duplicate key from any other error, inside a transaction as well", async () => {
      await sql`insert into keyed values ('a')`.execute(database.kysely);
      expect(isUniqueViolation(await failure(() => sql`insert into keyed values ('a')`.execute(database.kysely)))).toBe(
        true,
      );
      const inTransaction = await failure(() =>
        database.kysely.transaction().execute((trx) => sql`insert into keyed values ('a')`.execute(trx)),
      );
      expect(isUniqueViolation(inTransaction)).toBe(true);
      expect(
        isUniqueViolation(await failure(() => sql`insert into keyed values (null)`.execute(database.kysely))),
      ).toBe(false);
      expect(isUniqueViolation(new Error("duplicate key"))).toBe(false);
    });
  });
}
