import { internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, startActivated, stopTenancies } from "./fixtures/harness.ts";
import { openSession, sessionSecretOf } from "./fixtures/sessions.ts";

/**
 * A session opened from a session while the one above that is being signed out: the revocation's
 * walk down the chain reads the chain as it was when the walk began, and a session recorded while
 * the walk waited for its parent's lock is not in it. Such a session is still refused, as every
 * session below a revoked one is. Postgres only: PGlite has one connection, nothing runs at once.
 */
const [postgres] = (await databaseTargets()).filter((t) => t.name === "postgres");

describe.skipIf(!postgres?.available)("a session opened while its chain is signed out", () => {
  let cleanup: (() => Promise<void>) | undefined;
  const suite = {} as {
    h: Awaited<ReturnType<typeof startActivated>>;
    database: Awaited<ReturnType<NonNullable<typeof postgres>["open"]>>["database"];
  };
  beforeAll(async () => {
    const opened = await postgres!.open();
    cleanup = opened.cleanup;
    suite.database = opened.database;
    suite.h = await startActivated(opened.database);
  });
  afterAll(async () => {
    await stopTenancies();
    await cleanup?.();
  });

  const open = (as: Principal) => openSession(suite.h, as);

  /** Backends of this database waiting on a lock, with what they run. */
  async function waiting(): Promise<string[]> {
    const { rows } = await sql<{ query: string }>`
      select query from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(suite.database.kysely);
    return rows.map((r) => r.query);
  }

  async function until(check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error("the interleaving never came");
  }

  it("is refused once the session above its parent is signed out", async () => {
    const { h } = suite;
    const vera = await addMember(h, h.owner, h.orgId, "vera@race.test", "member");
    const a = await open(vera);
    const b = await open(a.principal);

    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    // Holds vera's user row: opening a session from b takes b's lock, then waits here to record it.
    let holding!: () => void;
    const held = new Promise<void>((r) => {
      holding = r;
    });
    const holder = suite.database.kysely.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      await sql`select id from tenancy.users where id = ${vera.id} for update`.execute(conn);
      holding();
      await released;
      await sql`commit`.execute(conn);
    });
    await held;

    const opening = h.call("POST", "/v1/auth/sessions", { as: b.principal });
    await until(async () => (await waiting()).length === 1);
    // Signing a out: a is revoked at once, the walk down from it waits for b's lock.
    const signingOut = h.call("DELETE", "/v1/auth/session", { as: a.principal });
    await until(async () => (await waiting()).length === 2);
    release();
    await holder;

    // b was open when it was locked: the session is recorded, below a chain that is now revoked.
    const opened = await opening;
    expect(opened.status).toBe(201);
    expect((await signingOut).status).toBe(204);
    const secret = sessionSecretOf(opened);
    const resolved = await h.internal("POST", internalResolveSessionRoute.path, { secret });
    expect(resolved.status).toBe(401);
    expect((await h.internal("POST", internalResolveSessionRoute.path, { secret: b.secret })).status).toBe(401);
  });
});
