import type { BucketInterval } from "@agentplane/contracts";
import { badRequest } from "@agentplane/problem-details";
import { sql } from "kysely";

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/i;

/** Microseconds since the epoch from an ISO 8601 timestamp (JavaScript dates stop at milliseconds). */
export function isoToMicros(iso: string): number {
  const m = ISO.exec(iso);
  const ms = Date.parse(m ? `${m[1]}${m[3]}` : iso);
  if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${iso}`);
  const fraction = m?.[2] ? Number(m[2].padEnd(6, "0").slice(0, 6)) : (ms % 1000) * 1000;
  return Math.floor(ms / 1000) * 1_000_000 + fraction;
}

/** `2026-01-01T00:00:00.000123Z`; epoch microseconds stay below 2^53 until the year 2255. */
export function microsToIso(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const sub = micros - ms * 1000;
  return new Date(ms).toISOString().replace(/Z$/, `${String(sub).padStart(3, "0")}Z`);
}

/** Selects a timestamptz column as text with microseconds in UTC. */
export function microText(column: string) {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function intervalMs(interval: BucketInterval): number {
  return interval === "hour" ? HOUR : DAY;
}

export function floorTo(ms: number, interval: BucketInterval): number {
  const size = intervalMs(interval);
  return Math.floor(ms / size) * size;
}

export interface Window {
  from: Date;
  to: Date;
}

/**
 * The earliest time a query may name: Postgres has no year 0 (ISO 8601's 0000, 1 BC), so a
 * timestamp in it, or a default window reaching back into it, failed the query with a 500.
 */
const EARLIEST_MS = Date.parse("0001-01-01T00:00:00Z");
/**
 * The first time a query may not name: an offset such as -17:00 moves 9999-12-31T23:00 into the
 * year 10000, which JavaScript writes as +010000 and Postgres then refuses (a 500).
 */
const AFTER_LATEST_MS = Date.parse("+010000-01-01T00:00:00Z");

/** A query's timestamp as a Date; one before EARLIEST_MS or past the year 9999 is a 400 naming the parameter. */
function queryTime(value: string, name: string): Date {
  const at = new Date(value);
  if (!(at.getTime() >= EARLIEST_MS)) {
    throw badRequest(`${name} is before the year 1`, [
      { pointer: `/query/${name}`, message: "must be 0001-01-01T00:00:00Z or later" },
    ]);
  }
  if (at.getTime() >= AFTER_LATEST_MS) {
    throw badRequest(`${name} is after the year 9999`, [
      { pointer: `/query/${name}`, message: "must be before 10000-01-01T00:00:00Z" },
    ]);
  }
  return at;
}

/** Checks the timestamps a page query names (400 for one Postgres cannot take), and the order of from/to. */
export function checkQueryTimes(query: {
  from?: string | undefined;
  to?: string | undefined;
  cursor?: string | undefined;
}): void {
  if (query.cursor) queryTime(query.cursor, "cursor");
  if (query.from) queryTime(query.from, "from");
  if (query.to) queryTime(query.to, "to");
  // Only checks the order of from/to; an absent bound stays open.
  if (query.from && query.to) resolveWindow(query, 0);
}

/**
 * A [from, to) window from optional query values; `from` after `to` is a 400. A default `from`
 * stops at EARLIEST_MS.
 */
export function resolveWindow(
  query: { from?: string | undefined; to?: string | undefined },
  defaultSpanMs: number,
): Window {
  const to = query.to ? queryTime(query.to, "to") : new Date();
  const from = query.from
    ? queryTime(query.from, "from")
    : new Date(Math.max(EARLIEST_MS, to.getTime() - defaultSpanMs));
  if (from.getTime() > to.getTime()) {
    throw badRequest("from is after to", [{ pointer: "/query/from", message: "must not be after to" }]);
  }
  return { from, to };
}

/**
 * How many buckets cover [from, to), aligned to UTC hours or days; more than `max` is a 400. The
 * buckets themselves come from SQL (`bucketSeries`), so a series is zero-filled where it is read.
 */
export function checkBucketCount(window: Window, interval: BucketInterval, max: number): number {
  const size = intervalMs(interval);
  const first = floorTo(window.from.getTime(), interval);
  const count = Math.max(0, Math.ceil((window.to.getTime() - first) / size));
  if (count > max) {
    throw badRequest(`the window holds ${count} ${interval} buckets; at most ${max} are allowed`, [
      { pointer: "/query/interval", message: `at most ${max} buckets` },
    ]);
  }
  return count;
}

/**
 * `generate_series` of bucket starts (UTC wall-clock timestamps) covering [from, to), the same
 * values `bucketOf` gives rows, so a left join zero-fills the series.
 */
export function bucketSeries(window: Window, interval: BucketInterval) {
  const from = window.from.toISOString();
  const to = window.to.toISOString();
  return sql<Date>`generate_series(
    date_trunc(${sql.lit(interval)}, ${from}::timestamptz at time zone 'UTC'),
    (${to}::timestamptz at time zone 'UTC') - interval '1 microsecond',
    ${sql.lit(`1 ${interval}`)}::interval
  )`;
}

/** A bucket start (UTC wall-clock timestamp) as `YYYY-MM-DDTHH:MI:SS.000Z`. */
export function bucketText(column: string) {
  return sql<string>`to_char(${sql.ref(column)}, 'YYYY-MM-DD"T"HH24:MI:SS".000Z"')`;
}

export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** Calendar month (UTC) or day containing `at`. */
export function periodOf(period: "monthly" | "daily", at: Date): { start: Date; end: Date } {
  if (period === "daily") {
    const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
    return { start, end: new Date(start.getTime() + DAY) };
  }
  const start = monthStart(at);
  return { start, end: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)) };
}

/**
 * The same instant in UTC with its fraction digits as given: Postgres refuses a UTC offset beyond
 * ±15:59 that RFC 3339 allows (up to ±23:59), which failed a page query with a 500.
 */
export function utcTimestamp(iso: string): string {
  const m = ISO.exec(iso);
  if (!m) return iso;
  // checkQueryTimes keeps the year within 1..9999, which toISOString writes in four digits.
  const seconds = new Date(Date.parse(`${m[1]}${m[3]}`)).toISOString().slice(0, -5);
  return `${seconds}${m[2] ? `.${m[2]}` : ""}Z`;
}

/**
 * A timestamp parameter that keeps its microseconds: postgres.js serializes a parameter it knows
 * is a timestamptz through `Date` (milliseconds), so the value is sent as text (in UTC) and cast in SQL.
 */
export function microParam(iso: string) {
  return sql<string>`cast(cast(${utcTimestamp(iso)} as text) as timestamptz)`;
}
