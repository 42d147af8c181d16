import type { AuditRecord, AuditRecorded } from "@agentplane/contracts";
import { CompiledQuery, type Kysely } from "kysely";
import { AUDIT_SCHEMA, type AuditDb, type AuditRecordsTable } from "../db/schema.ts";
import { isoToMicros, microParam, microsToIso, microText } from "./time.ts";

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
  const run = async (trx: Kysely<AuditDb>) => {
    // A redelivered event still takes a timestamp here and is then skipped by the insert: it costs
    // one unused microsecond, which is cheaper than asking first for every batch.
    const byOrg = new Map<string, AuditRecorded[]>();
    const rows: AuditRecordsTable[] = [];
    let clockParam = "[]";
    for (const e of unique.values()) {
      const clock = e.orgId ?? INSTALLATION_CLOCK;
      const list = byOrg.get(clock) ?? [];
      list.push(e);
      byOrg.set(clock, list);
    }
    if (byOrg.size > 0) {
      // Sorted so that concurrent batches lock clock rows in the same order (no deadlocks).
      const orgIds = [...byOrg.keys()].sort();
      const ids = JSON.stringify(orgIds);
      let clocks = (await trx.executeQuery<{ org_id: string; last: string }>(CompiledQuery.raw(LOCK_CLOCKS, [ids])))
        .rows;
      if (clocks.length < orgIds.length) {
        // An organization's first records: its clock row is created, then all are locked in order.
        await trx.executeQuery(CompiledQuery.raw(CREATE_CLOCKS, [ids, EPOCH]));
        clocks = (await trx.executeQuery<{ org_id: string; last: string }>(CompiledQuery.raw(LOCK_CLOCKS, [ids]))).rows;
      }
      const advanced: { orgId: string; last: string }[] = [];
      for (const clock of clocks) {
        const list = byOrg.get(clock.org_id) ?? [];
        const timed = list
          .map((e) => ({ e, at: isoToMicros(e.time) }))
          .sort((a, b) => a.at - b.at || (a.e.id < b.e.id ? -1 : 1));
        let last = isoToMicros(clock.last);
        for (const { e, at } of timed) {
          last = Math.max(at, last + 1);
          rows.push(toRow(e, microsToIso(last)));
        }
        advanced.push({ orgId: clock.org_id, last: microsToIso(last) });
      }
      // The clocks advance in the statement that inserts the records.
      clockParam = JSON.stringify(advanced);
    }
    const result = await trx.executeQuery(CompiledQuery.raw(INSERT_RECORDS, [JSON.stringify(rows), clockParam]));
    return Number(result.numAffectedRows ?? 0);
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

// Fixed statement texts with the batch in one JSON parameter: prepared once per connection
// whatever the batch size, and nothing to build per call.
const LOCK_CLOCKS = `select org_id, to_char(last_ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as last from ${AUDIT_SCHEMA}.org_clocks
  where org_id in (select jsonb_array_elements_text(cast(cast($1 as text) as jsonb)))
  order by org_id
  for update`;

const CREATE_CLOCKS = `insert into ${AUDIT_SCHEMA}.org_clocks (org_id, last_ts)
  select o, cast(cast($2 as text) as timestamptz) from jsonb_array_elements_text(cast(cast($1 as text) as jsonb)) as o
  on conflict (org_id) do nothing`;

// One parameter holding every row as JSON: far cheaper to build and parse than 21 per row. The
// organizations' clocks ($2) advance in the same statement.
const INSERT_RECORDS = `with advanced as (
    update ${AUDIT_SCHEMA}.org_clocks as c set last_ts = cast(v.last as timestamptz)
    from jsonb_to_recordset(cast(cast($2 as text) as jsonb)) as v("orgId" text, last text)
    where c.org_id = v."orgId"
  )
  insert into ${AUDIT_SCHEMA}.audit_records (event_id, org_id, project_id, ts, occurred_at,
    principal_type, principal_id, principal_name, action, source, target_type, target_id, targets, outcome, status,
    request_id, ip, user_agent, method, path, details)
  select event_id, org_id, project_id, cast(ts as timestamptz), cast(occurred_at as timestamptz), principal_type,
    principal_id, principal_name, action, source, target_type, target_id, coalesce(targets, '{}'::jsonb), outcome,
    status, request_id, ip, user_agent, method, path, details
  from jsonb_to_recordset(cast(cast($1 as text) as jsonb)) as r(event_id text, org_id text,
    project_id text, ts text, occurred_at text, principal_type text, principal_id text, principal_name text,
    action text, source text, target_type text, target_id text, targets jsonb, outcome text, status int,
    request_id text, ip text, user_agent text, method text, path text, details jsonb)
  on conflict (event_id) do nothing`;

function toRow(e: AuditRecorded, ts: string): AuditRecordsTable {
  return {
    event_id: e.id,
    org_id: e.orgId ?? null,
    project_id: e.projectId ?? null,
    ts,
    occurred_at: e.time,
    principal_type: e.principal.type,
    principal_id: e.principal.id ?? null,
    principal_name: e.principal.displayName ?? null,
    action: e.action,
    source: e.source ?? "request",
    target_type: e.targetType ?? null,
    target_id: e.targetId ?? null,
    targets: e.targets ?? {},
    outcome: e.outcome,
    status: e.status ?? null,
    request_id: e.requestId ?? null,
    ip: e.ip ?? null,
    user_agent: e.userAgent ?? null,
    method: e.method ?? null,
    path: e.path ?? null,
    details: e.details ?? null,
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
