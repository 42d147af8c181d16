import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { BullMqBus } from "@agentplane/events/bullmq";
import { createTestDatabase, requirePostgres, requireRedis, testRedisPrefix } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { addMember, startActivated, stopTenancies } from "./fixtures/harness.ts";
import { OwnRedis, waitFor } from "./fixtures/own-redis.ts";

const redis = await requireRedis();
const postgres = await requirePostgres();

describe.skipIf(!redis.available || !postgres.available)(
  `domain audit events through the outbox on Postgres and BullMQ${redis.reason}${postgres.reason}`,
  () => {
    const server = new OwnRedis();
    let producer: BullMqBus;
    let consumer: BullMqBus;
    let database: Database;
    let drop: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    const seen: AuditRecorded[] = [];
    const seenIds = new Set<string>();

    beforeAll(async () => {
      await server.start();
      const created = await createTestDatabase();
      drop = created.drop;
      database = await openDatabase(created.url, { max: 5 });
      const prefix = testRedisPrefix("tenancy-outbox");
      producer = new BullMqBus({ url: server.url, prefix });
      consumer = new BullMqBus({ url: server.url, prefix });
      await consumer.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
        seenIds.add(e.id);
        seen.push(e.data);
      });
      h = await startActivated(database, { eventRelay: { pollIntervalMs: 50, maxBackoffMs: 300 } }, { bus: producer });
    });
    afterAll(async () => {
      await stopTenancies();
      await Promise.all([producer?.close(), consumer?.close()]);
      await server.stop();
      await database?.close();
      await drop?.();
    });

    it("relays at start what was committed before the relay ran (the bootstrap activation)", async () => {
      await waitFor(() => seen.some((e) => e.action === "installation.activated"));
      const activated = seen.find((e) => e.action === "installation.activated");
      expect(activated).toMatchObject({
        source: "domain",
        orgId: h.orgId,
        targetId: h.service.installationId,
        details: { method: "bootstrap_token" },
      });
    });

    it("a member role change made while Redis is down succeeds, waits in the outbox and arrives once Redis is back", async () => {
      const bob = await addMember(h, h.owner, h.orgId, "bob@x.test", "member");
      await waitFor(async () => (await h.service.outbox.pending()) === 0);

      await server.stop();
      const res = await h.call("PATCH", `/v1/orgs/${h.orgId}/members/${bob.id}`, {
        as: h.owner,
        body: { role: "admin" },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ userId: bob.id, role: "admin" });
      // The relay tries (and fails) a few rounds: the event must still be kept.
      const attempts = async () =>
        (
          await sql<{ n: number }>`select coalesce(max(attempts), 0)::int as n from tenancy.event_outbox`.execute(
            database.kysely,
          )
        ).rows[0]?.n ?? 0;
      await vi.waitFor(async () => expect(await attempts()).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
      expect(await h.service.outbox.pending()).toBe(1);
      const isRoleChange = (e: AuditRecorded) => e.action === "member.role_changed" && e.targetId === bob.id;
      expect(seen.some(isRoleChange)).toBe(false);

      await server.start();
      await waitFor(() => seen.some(isRoleChange), 30_000);
      expect(seen.find(isRoleChange)).toMatchObject({
        source: "domain",
        outcome: "success",
        orgId: h.orgId,
        principal: { type: "api_token", id: h.owner.id },
        targetType: "user",
        details: { from: "member", to: "admin" },
      });
      await waitFor(async () => (await h.service.outbox.pending()) === 0);
      expect(seen.filter(isRoleChange)).toHaveLength(1);
    });

    it("a refused change records nothing", async () => {
      const before = seen.length;
      const ownerPath = `/v1/orgs/${h.orgId}/members/${h.owner.userId}`;
      expect((await h.call("PATCH", ownerPath, { as: h.owner, body: { role: "admin" } })).status).toBe(409);
      expect(await h.service.outbox.pending()).toBe(0);
      await h.service.outbox.flush();
      expect(seen.length).toBe(before);
    });
  },
);
