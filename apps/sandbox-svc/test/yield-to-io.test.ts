import { openDatabase } from "@agentplane/db";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { yieldToIo } from "../src/db/yield-to-io.ts";

describe("statements on the embedded database", () => {
  it("hand their results back after the event loop's turn, so I/O is read between them", async () => {
    const database = await openDatabase("pglite://memory");
    try {
      const turnsDuring = async (db: typeof database.kysely) => {
        let turns = 0;
        let counting = true;
        const count = () => {
          if (!counting) return;
          turns++;
          setImmediate(count);
        };
        setImmediate(count);
        await db.transaction().execute(async (trx) => {
          for (let i = 0; i < 5; i++) await sql`select ${i}::int as n`.execute(trx);
        });
        counting = false;
        return turns;
      };
      // Every statement (and the transaction's end) lets at least one turn of the loop through.
      expect(await turnsDuring(database.kysely.withPlugin(yieldToIo))).toBeGreaterThanOrEqual(5);
    } finally {
      await database.close();
    }
  });
});
