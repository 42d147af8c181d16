// Audit ingestion (BullMQ → Postgres) and audit-trail page latency with 1,000,000 records in one
// organization, each against a baseline measured in the same run.
// Run: node scripts/bootstrap.mjs node bench/audit-ingest.ts   (AUDIT_BENCH_EVENTS, AUDIT_BENCH_RECORDS to resize)

import { AUDIT_SCHEMA, createAuditService } from "../apps/audit-svc/src/app.ts";
import { sql } from "../apps/audit-svc/src/db/raw.ts";
import type { AuditDb } from "../apps/audit-svc/src/db/schema.ts";
import { auditTrailQuery } from "../apps/audit-svc/src/services/audit-records.ts";
import type { AuditRecorded } from "../packages/contracts/src/index.ts";
import { AUDIT_RECORDED, type Principal } from "../packages/contracts/src/index.ts";
import { openDatabase } from "../packages/db/src/index.ts";
import { BullMqBus } from "../packages/events/src/bullmq-bus.ts";
import { generateInternalKeys, signIdentity, silentLogger } from "../packages/service-kit/src/index.ts";
import { createTestDatabase, TEST_REDIS_URL, testRedisPrefix } from "../packages/testkit/src/index.ts";

const EVENTS = Number(process.env.AUDIT_BENCH_EVENTS ?? 50_000);
const RECORDS = Number(process.env.AUDIT_BENCH_RECORDS ?? 1_000_000);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

function event(i: number, orgs: number): AuditRecorded {
  return {
    id: `bench-${i}-${Math.random().toString(36).slice(2, 10)}`,
    orgId: `org_bench_${i % orgs}`,
    principal: { type: "user", id: `usr_${i % 97}`, displayName: "Bench" },
    action: i % 3 ? "createProject" : "updateSandbox",
    source: "request",
    targetType: "project",
    targetId: `prj_${i % 1000}`,
    targets: { orgId: `org_bench_${i % orgs}`, projectId: `prj_${i % 1000}` },
    outcome: i % 17 ? "success" : "denied",
    status: i % 17 ? 201 : 403,
    requestId: `req_${i}`,
    method: "POST",
    path: "/v1/orgs/x/projects",
    time: new Date().toISOString(),
  };
}

async function publishAll(bus: BullMqBus, topic: string, events: AuditRecorded[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    await Promise.all(events.slice(i, i + 1000).map((e) => bus.publish(topic, e, { id: e.id, time: e.time })));
  }
}

const created = await createTestDatabase("bench_audit");
const database = await openDatabase(created.url, { max: 10 });
const keys = await generateInternalKeys();
const allow = { check: async () => ({ decision: "allowed" as const }) };
try {
  // ---- ingestion ----
  const prefix = testRedisPrefix("bench-audit");
  const producer = new BullMqBus({ url: TEST_REDIS_URL, prefix });

  // Baseline 1: the same BullMQ path with a consumer that stores nothing.
  const baselineEvents = Array.from({ length: EVENTS }, (_, i) => event(i, 20));
  await publishAll(producer, "bench.noop", baselineEvents);
  const noopBus = new BullMqBus({ url: TEST_REDIS_URL, prefix });
  let consumed = 0;
  const t0 = performance.now();
  // The same worker set-up as the audit consumer: two workers of 500 concurrent jobs.
  for (let w = 0; w < 2; w++) await noopBus.subscribe("bench.noop", async () => void consumed++, { concurrency: 500 });
  while (consumed < EVENTS) await new Promise((r) => setTimeout(r, 20));
  const noopMs = performance.now() - t0;
  await noopBus.close();

  // Measured: audit-svc consuming audit.recorded into Postgres (batched, idempotent, per-org timestamps).
  const events = Array.from({ length: EVENTS }, (_, i) => event(i, 20));
  await publishAll(producer, AUDIT_RECORDED, events);
  const consumerBus = new BullMqBus({ url: TEST_REDIS_URL, prefix });
  const t1 = performance.now();
  const service = await createAuditService({
    database,
    bus: consumerBus,
    keys,
    logger: silentLogger(),
    authorizer: allow,
    config: { maintenance: false },
  });
  const migratedMs = performance.now() - t1;
  const db = database.forSchema<AuditDb>(AUDIT_SCHEMA);
  const count = async () =>
    (await db.selectFrom("audit_records").select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow()).n;
  while ((await count()) < EVENTS) await new Promise((r) => setTimeout(r, 50));
  const ingestMs = performance.now() - t1 - migratedMs;
  await service.close();
  await consumerBus.close();
  await producer.close();

  // Baseline 2: plain multi-row INSERTs of the same rows (500 per statement), no bus, no clock.
  await sql`create table audit.raw_copy (like audit.audit_records including defaults)`.execute(database.kysely);
  await sql`create unique index on audit.raw_copy (event_id)`.execute(database.kysely);
  const t2 = performance.now();
  const rows = await db.selectFrom("audit_records").selectAll().execute();
  const readMs = performance.now() - t2;
  const t3 = performance.now();
  for (let i = 0; i < rows.length; i += 500) {
    await database.kysely
      .withSchema(AUDIT_SCHEMA)
      .insertInto("raw_copy")
      .values(rows.slice(i, i + 500).map((r) => ({ ...r, targets: JSON.stringify(r.targets), details: null })))
      .execute();
  }
  const rawMs = performance.now() - t3;

  console.log(`ingestion of ${EVENTS} audit events (20 organizations), BullMQ → Postgres:`);
  console.log(`  audit-svc consumer:           ${rate(EVENTS, ingestMs)} events/s`);
  console.log(
    `  baseline BullMQ, no storage:  ${rate(EVENTS, noopMs)} events/s  (ratio ${(noopMs / ingestMs).toFixed(2)})`,
  );
  console.log(
    `  baseline raw 500-row INSERT:  ${rate(EVENTS, rawMs)} rows/s    (ratio ${(rawMs / ingestMs).toFixed(2)})`,
  );
  console.log(`  (read of the rows for the raw baseline took ${Math.round(readMs)} ms, not counted)`);

  // ---- page latency with 1,000,000 records in one organization ----
  const t4 = performance.now();
  // One record every 2.5 s going back from now: ~29 days; a distinct microsecond each, as ingestion assigns.
  await sql`
    insert into audit.audit_records (event_id, org_id, ts, occurred_at, principal_type, principal_id, action,
      source, target_type, target_id, targets, outcome, status, method, path, request_id)
    select 'seed-' || g, 'org_big', now() - (g * interval '2500 milliseconds'), now() - (g * interval '2500 milliseconds'),
      'user', 'usr_' || (g % 50), case when g % 10 = 0 then 'deleteProject' else 'createProject' end,
      'request', 'project', 'prj_' || (g % 5000), jsonb_build_object('projectId', 'prj_' || (g % 5000)),
      case when g % 13 = 0 then 'denied' else 'success' end, 201, 'POST', '/v1/orgs/org_big/projects', 'req_' || g
    from generate_series(1, ${RECORDS}) g`.execute(database.kysely);
  await sql`analyze audit.audit_records`.execute(database.kysely);
  console.log(`\nseeded ${RECORDS} records in one organization in ${((performance.now() - t4) / 1000).toFixed(1)} s`);

  const cursorSample = await sql<{ ts: string }>`
    select to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ts from audit.audit_records
    where org_id = 'org_big' order by ts desc offset ${Math.floor(RECORDS * 0.7)} limit 1`.execute(database.kysely);
  const deepCursor = cursorSample.rows[0]!.ts;
  const compiled = auditTrailQuery(db, "org_big", { limit: 50, cursor: deepCursor }).compile();
  const plan = await database.kysely.executeQuery<{ "QUERY PLAN": string }>({
    ...compiled,
    sql: `explain (analyze, buffers, costs off, timing off) ${compiled.sql}`,
  });
  console.log("\nEXPLAIN of the page query (cursor 70% deep, limit 50):");
  for (const row of plan.rows) console.log(`  ${row["QUERY PLAN"]}`);

  const service2 = await createAuditService({
    database,
    bus: new BullMqBus({ url: TEST_REDIS_URL, prefix: testRedisPrefix("bench-audit-2") }),
    keys,
    logger: silentLogger(),
    authorizer: allow,
    config: { maintenance: false },
  });
  const principal: Principal = { type: "user", id: "usr_1" };
  const identity = await signIdentity(keys, principal, { audience: "audit", ttlSeconds: 600 });
  const get = async (query: string) => {
    const start = performance.now();
    const res = await service2.fetch(
      new Request(`http://audit.internal/v1/orgs/org_big/audit-trail?${query}`, {
        headers: { "x-agentplane-identity": identity },
      }),
    );
    const body = (await res.json()) as { items: unknown[]; nextCursor?: string };
    if (res.status !== 200 || body.items.length === 0) throw new Error(`unexpected ${res.status}`);
    return { ms: performance.now() - start, next: body.nextCursor };
  };
  for (let i = 0; i < 30; i++) await get("limit=50");
  const scenarios: [string, () => string][] = [
    ["first page, limit 50", () => "limit=50"],
    [
      "random deep cursor, limit 50",
      () => `limit=50&cursor=${new Date(Date.now() - Math.random() * 28 * 86_400_000).toISOString()}`,
    ],
    [
      "filter action + cursor, limit 50",
      () =>
        `limit=50&action=deleteProject&cursor=${new Date(Date.now() - Math.random() * 28 * 86_400_000).toISOString()}`,
    ],
    ["limit 500", () => "limit=500"],
  ];
  console.log(`\naudit-trail page latency over HTTP handler (in process), ${RECORDS} records in the organization:`);
  for (const [name, query] of scenarios) {
    const times: number[] = [];
    for (let i = 0; i < 300; i++) times.push((await get(query())).ms);
    console.log(`  ${name.padEnd(34)} p50 ${pct(times, 0.5).toFixed(2)} ms  p95 ${pct(times, 0.95).toFixed(2)} ms`);
  }
  // Walking 40 pages with nextCursor, as a client would.
  let cursor: string | undefined;
  const walk: number[] = [];
  for (let i = 0; i < 40; i++) {
    const r = await get(`limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    walk.push(r.ms);
    cursor = r.next;
  }
  console.log(
    `  ${"walk 40 pages by nextCursor".padEnd(34)} p50 ${pct(walk, 0.5).toFixed(2)} ms  p95 ${pct(walk, 0.95).toFixed(2)} ms`,
  );
  await service2.close();
} finally {
  await database.close();
  await created.drop();
}
process.exit(0);
