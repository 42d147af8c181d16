import type { AuditRecord, AuditRecorded } from "@agentplane/contracts";
import { isUniqueViolation, pgTemplated, pgTemplatedSource } from "@agentplane/db";
import { CompiledQuery, type Kysely } from "kysely";
import { AUDIT_SCHEMA, type AuditDb, type AuditRecordsTable } from "../db/schema.ts";
import { microParam, microText } from "./time.ts";

const EPOCH = "1970-01-01T00:00:00.000000Z";
/** The `org_clocks` row of records that belong to no organization. */
const INSTALLATION_CLOCK = "";

/**
 * Stores audit events once each (the event id is the primary key; redeliveries are skipped) and
 * gives every record of an organization a distinct microsecond timestamp: records are ordered by
 * their event time, and one that would tie with (or fall behind) the newest stored record of its
 * organization is moved forward to one microsecond after it. The per-organization high-water mark
 * lives in `org_clocks`; its row lock serializes concurrent consumers per organization, so a
 * timestamp cursor can never skip or repeat a record. Records of no organization (the
 * installation's trail) share the clock row keyed by the empty string. Returns how many records were new.
 */
export async function storeAuditRecords(db: Kysely<AuditDb>, events: readonly AuditRecorded[]): Promise<number> {
  const unique = new Map<string, AuditRecorded>();
  for (const e of events) unique.set(e.id, e);
  if (unique.size === 0) return 0;
  // A redelivered event still takes a timestamp and is then skipped by the insert: it costs one
  // unused microsecond, which is cheaper than asking first for every batch.
  const rows = pgTemplated([...unique.values()].map(toRow), OWN_COLUMNS, SHARED_COLUMNS);
  const store = async (text = STORE_RECORDS) =>
    (await db.executeQuery<{ stored: number; unclocked: number }>(CompiledQuery.raw(text, rows))).rows[0]!;
  // Redeliveries are rare: first without looking up every event id (see storeRecords), unless a
  // failed statement would abort the caller's transaction.
  const first = db.isTransaction
    ? await store()
    : await store(STORE_NEW_RECORDS).catch((err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        return store();
      });
  if (Number(first.unclocked) === 0) return Number(first.stored);
  // An organization's first records: its clock row is created, and the records without one stored.
  const orgIds = [...new Set([...unique.values()].map((e) => e.orgId ?? INSTALLATION_CLOCK))].sort();
  await db.executeQuery(CompiledQuery.raw(CREATE_CLOCKS, [JSON.stringify(orgIds), EPOCH]));
  return Number(first.stored) + Number((await store()).stored);
}

/**
 * A batch's columns (`pgTemplated`): each record's own, and those that records of one caller and
 * route repeat, sent once per distinct combination. Those not listed in INPUT_TYPES are text.
 */
const OWN_COLUMNS = ["event_id", "occurred_at", "request_id"] as const;
const SHARED_COLUMNS = [
  "org_id",
  "project_id",
  "principal_type",
  "principal_id",
  "principal_name",
  "action",
  "source",
  "target_type",
  "target_id",
  "targets",
  "outcome",
  "status",
  "ip",
  "user_agent",
  "method",
  "path",
  "details",
] as const;
const INPUT_TYPES: Partial<Record<(typeof OWN_COLUMNS)[number] | (typeof SHARED_COLUMNS)[number], string>> = {
  targets: "jsonb",
  status: "int",
  details: "jsonb",
};

const CREATE_CLOCKS = `insert into ${AUDIT_SCHEMA}.org_clocks (org_id, last_ts)
  select o, cast(cast($2 as text) as timestamptz) from jsonb_array_elements_text(cast(cast($1 as text) as jsonb)) as o
  on conflict (org_id) do nothing`;

const micros = (ts: string) => `(extract(epoch from ${ts}) * 1000000)::bigint`;
const fromMicros = (m: string) => `(to_timestamp(${m} / 1000000) + (${m} % 1000000) * interval '1 microsecond')`;

/**
 * One statement, atomic on its own: locks the batch's clock rows (in order; a concurrent batch of
 * the same organization waits, then reads the clock it advanced), numbers each organization's
 * records by event time, gives the k-th one k + max(clock, max over j <= k of (time_j - j)) in
 * microseconds (the same as moving each record to at least one microsecond after the one before
 * it, starting from the clock), advances the clocks to their last record and inserts the records.
 * Records of an organization without a clock row yet are counted as `unclocked` and not stored.
 * Each record's event time is parsed from its text once, for its clock and for its column.
 *
 * `skipStored`: also skip events stored before (redeliveries). Without it the insert has no per-row
 * look-up of the event id, and a redelivered event fails the statement as a whole (a unique
 * violation: no clock moved, nothing stored) so that the batch is stored again with it.
 */
const storeRecords = (skipStored: boolean) => `with input as (
    select r.*, coalesce(r.org_id, '') as clock, ${micros("r.occurred")} as at
    from (select r.*, cast(r.occurred_at as timestamptz) as occurred
      from ${pgTemplatedSource(OWN_COLUMNS, SHARED_COLUMNS, INPUT_TYPES)}) as r
  ),
  locked as (
    select org_id, ${micros("last_ts")} as c from ${AUDIT_SCHEMA}.org_clocks
    where org_id in (select clock from input)
    order by org_id
    for update
  ),
  numbered as (
    select i.*, row_number() over (partition by i.clock order by i.at, i.event_id collate "C") as k
    from input i
  ),
  timed as (
    select n.*, n.k + greatest(l.c, max(n.at - n.k) over (partition by n.clock order by n.k
      rows between unbounded preceding and current row)) as ts
    from numbered n join locked l on l.org_id = n.clock
  ),
  advanced as (
    update ${AUDIT_SCHEMA}.org_clocks as c set last_ts = ${fromMicros("t.last")}
    from (select clock, max(ts) as last from timed group by clock) as t
    where c.org_id = t.clock
  ),
  stored as (
    insert into ${AUDIT_SCHEMA}.audit_records (event_id, org_id, project_id, ts, occurred_at,
      principal_type, principal_id, principal_name, action, source, target_type, target_id, targets, outcome,
      status, request_id, ip, user_agent, method, path, details)
    select event_id, org_id, project_id, ${fromMicros("ts")}, occurred, principal_type,
      principal_id, principal_name, action, source, target_type, target_id, coalesce(targets, '{}'::jsonb), outcome,
      status, request_id, ip, user_agent, method, path, details
    from timed
    ${skipStored ? "on conflict (event_id) do nothing" : ""}
    returning 1
  )
  select (select count(*) from stored)::int as stored,
    (select count(*) from input i where not exists (select 1 from locked l where l.org_id = i.clock))::int as unclocked`;
const STORE_RECORDS = storeRecords(true);
const STORE_NEW_RECORDS = storeRecords(false);

/** A record's input row; its jsonb columns as JSON text. */
function toRow(e: AuditRecorded): Omit<AuditRecordsTable, "ts"> {
  return {
    event_id: e.id,
    org_id: e.orgId ?? null,
    project_id: e.projectId ?? null,
    occurred_at: e.time,
    principal_type: e.principal.type,
    principal_id: e.principal.id ?? null,
    principal_name: e.principal.displayName ?? null,
    action: e.action,
    source: e.source ?? "request",
    target_type: e.targetType ?? null,
    target_id: e.targetId ?? null,
    targets: JSON.stringify(e.targets ?? {}),
    outcome: e.outcome,
    status: e.status ?? null,
    request_id: e.requestId ?? null,
    ip: e.ip ?? null,
    user_agent: e.userAgent ?? null,
    method: e.method ?? null,
    path: e.path ?? null,
    details: e.details === undefined || e.details === null ? null : JSON.stringify(e.details),
  };
}

export interface AuditTrailFilter {
  actor?: string | undefined;
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  outcome?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** The page query: one organization (`null`: records of none), newest first, strictly older than the cursor. */
export function auditTrailQuery(db: Kysely<AuditDb>, orgId: string | null, f: AuditTrailFilter) {
  let q = db
    .selectFrom("audit_records")
    .selectAll()
    .select(microText("ts").as("ts_text"))
    .select(microText("occurred_at").as("occurred_text"))
    .where("org_id", orgId === null ? "is" : "=", orgId);
  if (f.actor) q = q.where("principal_id", "=", f.actor);
  if (f.action) q = q.where("action", "=", f.action);
  if (f.targetType) q = q.where("target_type", "=", f.targetType);
  if (f.targetId) q = q.where("target_id", "=", f.targetId);
  if (f.outcome) q = q.where("outcome", "=", f.outcome);
  if (f.from) q = q.where("ts", ">=", microParam(f.from));
  if (f.to) q = q.where("ts", "<", microParam(f.to));
  if (f.cursor) q = q.where("ts", "<", microParam(f.cursor));
  return q.orderBy("ts", "desc").limit(f.limit + 1);
}

export async function listAuditTrail(
  db: Kysely<AuditDb>,
  orgId: string | null,
  filter: AuditTrailFilter,
): Promise<{ items: AuditRecord[]; nextCursor?: string }> {
  const rows = await auditTrailQuery(db, orgId, filter).execute();
  const more = rows.length > filter.limit;
  const page = more ? rows.slice(0, filter.limit) : rows;
  const items = page.map(toRecord);
  const last = items[items.length - 1];
  return more && last ? { items, nextCursor: last.time } : { items };
}

type Row = AuditRecordsTable & { ts_text: string; occurred_text: string };

function parseJson<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

function toRecord(r: Row): AuditRecord {
  return {
    id: r.event_id,
    time: r.ts_text,
    occurredAt: r.occurred_text,
    ...(r.org_id ? { orgId: r.org_id } : {}),
    ...(r.project_id ? { projectId: r.project_id } : {}),
    principal: {
      type: r.principal_type,
      ...(r.principal_id ? { id: r.principal_id } : {}),
      ...(r.principal_name ? { displayName: r.principal_name } : {}),
    },
    action: r.action,
    source: r.source as "request" | "domain",
    ...(r.target_type ? { targetType: r.target_type } : {}),
    ...(r.target_id ? { targetId: r.target_id } : {}),
    targets: parseJson<Record<string, string>>(r.targets) ?? {},
    outcome: r.outcome as AuditRecord["outcome"],
    ...(r.status !== null ? { status: r.status } : {}),
    ...(r.request_id ? { requestId: r.request_id } : {}),
    ...(r.ip ? { ip: r.ip } : {}),
    ...(r.user_agent ? { userAgent: r.user_agent } : {}),
    ...(r.method ? { method: r.method } : {}),
    ...(r.path ? { path: r.path } : {}),
    ...(r.details !== null ? { details: parseJson<Record<string, unknown>>(r.details) } : {}),
  };
}

/** The installation's first owner and organization, from its activation record (none before activation). */
export async function installationOwner(db: Kysely<AuditDb>): Promise<{ orgId: string; ownerId: string } | undefined> {
  const row = await db
    .selectFrom("audit_records")
    .select(["org_id", "details"])
    .where("action", "=", "installation.activated")
    .where("org_id", "is not", null)
    .orderBy("ts", "asc")
    .limit(1)
    .executeTakeFirst();
  const ownerId = row ? parseJson<{ ownerId?: unknown } | null>(row.details)?.ownerId : undefined;
  return row?.org_id && typeof ownerId === "string" ? { orgId: row.org_id, ownerId } : undefined;
}
