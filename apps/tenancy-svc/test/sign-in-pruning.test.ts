import { randomBytes } from "node:crypto";
import { newId } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { silentLogger } from "@agentplane/service-kit";
import { type Selectable, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeviceAuthorizationTable } from "../src/db/schema.ts";
import { startSignInPruning } from "../src/services/sign-in-pruning.ts";
import { json, startActivated, startTenancy, stopTenancies } from "./fixtures/harness.ts";

type DeviceStatus = Selectable<DeviceAuthorizationTable>["status"];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(await databaseTargets())("pruning of expired device sign-ins and sessions ($name)", (target) => {
  let cleanup: () => Promise<void>;
  let database: Database;
  let h: Awaited<ReturnType<typeof startActivated>>;
  let userId: string;
  beforeAll(async () => {
    if (!target.available) return;
    const opened = await target.open();
    cleanup = opened.cleanup;
    database = opened.database;
    // No timer: every run below is called with its own clock.
    h = await startActivated(opened.database, { signInPruneIntervalMs: 0 });
    userId = (await h.service.context.db.selectFrom("users").select("id").executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await stopTenancies();
    await cleanup?.();
  });
  const db = () => h.service.context.db;
  const hex = () => randomBytes(16).toString("hex");

  async function deviceRequests(expiresAt: Date, count = 1, status: DeviceStatus = "consumed"): Promise<string[]> {
    const rows = Array.from({ length: count }, () => ({
      id: newId("deviceAuthorization"),
      device_code_hash: hex(),
      user_code_hash: hex(),
      client_name: "a device",
      status,
      interval_seconds: 5,
      expires_at: expiresAt,
      last_polled_at: null,
      user_id: null,
      token_id: null,
      token_enc: null,
      decided_at: null,
    }));
    for (let i = 0; i < rows.length; i += 1000) {
      await db()
        .insertInto("device_authorizations")
        .values(rows.slice(i, i + 1000))
        .execute();
    }
    return rows.map((r) => r.id);
  }
  async function session(expiresAt: Date, revokedAt: Date | null = null): Promise<string> {
    const id = newId("browserSession");
    await db()
      .insertInto("browser_sessions")
      .values({
        id,
        user_id: userId,
        api_token_id: null,
        via: "oidc",
        secret_hash: hex(),
        user_agent: null,
        expires_at: expiresAt,
        last_used_at: null,
        revoked_at: revokedAt,
      })
      .execute();
    return id;
  }
  const ids = async (table: "device_authorizations" | "browser_sessions") =>
    (await db().selectFrom(table).select("id").execute()).map((r) => r.id);
  const clear = async () => {
    await db().deleteFrom("device_authorizations").execute();
    await db().deleteFrom("browser_sessions").execute();
  };

  it.skipIf(!target.available)(
    `deletes what expired long ago and keeps what is usable or recent${target.reason}`,
    async () => {
      await clear();
      const now = Date.now();
      // Usable: a device sign-in just started, and a session just opened, both through the API.
      const started = await json<{ deviceCode: string }>(
        await h.call("POST", "/v1/auth/device", { body: { clientName: "laptop" } }),
      );
      const opened = await h.call("POST", "/v1/auth/sessions", { as: h.owner });
      expect(opened.status).toBe(201);
      const live = (await json<{ session: { id: string } }>(opened)).session.id;
      const [recentDevice] = await deviceRequests(new Date(now - HOUR), 1, "denied");
      const oldDevices = [
        ...(await deviceRequests(new Date(now - 2 * DAY))),
        ...(await deviceRequests(new Date(now - DAY - HOUR), 1, "pending")),
      ];
      const recentlyExpired = await session(new Date(now - 2 * DAY));
      const recentlyRevoked = await session(new Date(now + HOUR), new Date(now - HOUR));
      await session(new Date(now - 40 * DAY));
      await session(new Date(now - 31 * DAY), new Date(now - 31 * DAY - HOUR));
      const freshDevices = await ids("device_authorizations");
      const listSessions = async () =>
        (await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/auth/sessions", { as: h.owner }))).items;
      const listedBefore = await listSessions();
      expect(listedBefore.map((s) => s.id)).toContain(live);

      expect(await h.service.signInPruning.run(new Date(now))).toEqual({
        deviceRequests: 2,
        sessions: 2,
        apiTokens: 0,
        invitations: 0,
      });
      expect((await ids("device_authorizations")).sort()).toEqual(
        freshDevices.filter((id) => !oldDevices.includes(id)).sort(),
      );
      expect(await ids("device_authorizations")).toContain(recentDevice);
      expect((await ids("browser_sessions")).sort()).toEqual([live, recentlyExpired, recentlyRevoked].sort());
      // The started sign-in still works, and the list of sessions is what it was.
      const poll = await h.call("POST", "/v1/auth/device/token", { body: { deviceCode: started.deviceCode } });
      expect((await json<{ error: string }>(poll)).error).toBe("authorization_pending");
      expect(await listSessions()).toEqual(listedBefore);
      expect(await h.service.signInPruning.run(new Date(now))).toEqual({
        deviceRequests: 0,
        sessions: 0,
        apiTokens: 0,
        invitations: 0,
      });

      // Two days on, every device request is past its grace; a month on, every session too.
      expect((await h.service.signInPruning.run(new Date(now + 2 * DAY))).deviceRequests).toBe(2);
      expect(await ids("device_authorizations")).toEqual([]);
      expect(await ids("browser_sessions")).toHaveLength(3);
      expect((await h.service.signInPruning.run(new Date(now + 31 * DAY))).sessions).toBe(3);
      expect(await ids("browser_sessions")).toEqual([]);
    },
  );

  it.skipIf(!target.available)(`finds the rows to delete through an index${target.reason}`, async () => {
    for (const table of ["device_authorizations", "browser_sessions"] as const) {
      const plan = await db()
        .transaction()
        .execute(async (trx) => {
          // With sequential scans priced out, only an index on expires_at avoids one.
          await sql`set local enable_seqscan = off`.execute(trx);
          return trx
            .selectFrom(table)
            .select("id")
            .where("expires_at", "<", new Date())
            .limit(1000)
            .forUpdate()
            .skipLocked()
            .explain();
        });
      const text = plan.map((row) => Object.values(row).join(" ")).join("\n");
      expect(text).toContain(`${table}_expires_at`);
      expect(text).not.toMatch(/Seq Scan/);
    }
  });

  it.skipIf(!target.available)(`removes more rows than one batch holds in one run${target.reason}`, async () => {
    await clear();
    const keep = await deviceRequests(new Date(Date.now() + HOUR), 1, "pending");
    await deviceRequests(new Date(Date.now() - 3 * DAY), 2_500);
    expect(await h.service.signInPruning.run()).toEqual({
      deviceRequests: 2_500,
      sessions: 0,
      apiTokens: 0,
      invitations: 0,
    });
    expect(await ids("device_authorizations")).toEqual(keep);
  });

  it.skipIf(!target.available)(`stops at the cap of batches per run${target.reason}`, async () => {
    await clear();
    await deviceRequests(new Date(Date.now() - 3 * DAY), 30);
    const pruner = startSignInPruning({
      db: db(),
      logger: silentLogger(),
      intervalMs: 0,
      limits: { batchSize: 7, maxBatches: 2 },
    });
    expect((await pruner.run()).deviceRequests).toBe(14);
    expect((await pruner.run()).deviceRequests).toBe(14);
    expect((await pruner.run()).deviceRequests).toBe(2);
    await pruner.stop();
  });

  it.skipIf(!target.available)(`stops on shutdown, mid-run and for good${target.reason}`, async () => {
    await clear();
    await deviceRequests(new Date(Date.now() - 3 * DAY), 30);
    const pruner = startSignInPruning({ db: db(), logger: silentLogger(), limits: { batchSize: 5 } });
    const running = pruner.run();
    await pruner.stop();
    // The statement under way finished; none followed it, and none comes after the stop.
    expect((await running).deviceRequests).toBe(5);
    expect(await pruner.run()).toEqual({ deviceRequests: 0, sessions: 0, apiTokens: 0, invitations: 0 });
    expect(await ids("device_authorizations")).toHaveLength(25);

    // The service's own pruner ends with the service (a second replica on the same database).
    const other = await startTenancy(database);
    await other.service.close();
    expect(await other.service.signInPruning.run()).toEqual({
      deviceRequests: 0,
      sessions: 0,
      apiTokens: 0,
      invitations: 0,
    });
    expect(await ids("device_authorizations")).toHaveLength(25);
  });
});
