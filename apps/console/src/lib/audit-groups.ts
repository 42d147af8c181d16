/**
 * One change is recorded twice: the gateway's record of the request (named after the API
 * operation, `updateOrganization`) and the service's domain record (`organization.updated`), both
 * with the request's id. The audit page shows the records of one request as one row: the domain
 * record, with the others of the same request folded under it.
 */
export interface GroupableRecord {
  time: string;
  source: "request" | "domain";
  requestId?: string | undefined;
}

export interface AuditGroup<R extends GroupableRecord> {
  /** The row shown: the request's newest domain record, or its newest record when it has none. */
  record: R;
  /** The request's other records on the page, newest first; empty for a record alone. */
  related: R[];
}

/**
 * Groups a page of records (newest first, as the API pages them) by request id. A group stands
 * where its newest record stood; a record without a request id, or alone in its request, is a
 * group of one. Only the records given are grouped: a request whose records straddle two pages
 * shows on each page with the records that page holds.
 */
export function groupAuditRecords<R extends GroupableRecord>(records: readonly R[]): AuditGroup<R>[] {
  const sorted = records
    .map((record, index) => ({ record, index }))
    .sort((a, b) => newerFirst(a.record.time, b.record.time) || a.index - b.index)
    .map((entry) => entry.record);
  const byRequest = new Map<string, R[]>();
  for (const record of sorted) {
    if (!record.requestId) continue;
    const members = byRequest.get(record.requestId);
    if (members) members.push(record);
    else byRequest.set(record.requestId, [record]);
  }
  const groups: AuditGroup<R>[] = [];
  for (const record of sorted) {
    const members = record.requestId ? byRequest.get(record.requestId) : undefined;
    if (!members) {
      groups.push({ record, related: [] });
      continue;
    }
    // The newest record of the request places the group; the others are already in it.
    if (members[0] !== record) continue;
    const shown = members.find((m) => m.source === "domain") ?? record;
    groups.push({ record: shown, related: members.filter((m) => m !== shown) });
  }
  return groups;
}

/**
 * Audit times are RFC 3339 with microseconds (`2026-01-01T00:00:00.000123Z`), finer than `Date`
 * parses: compare the instant to the millisecond, then the digits beyond it.
 */
function newerFirst(a: string, b: string): number {
  const ms = Date.parse(b) - Date.parse(a);
  if (Number.isNaN(ms)) return 0;
  if (ms) return ms;
  const fraction = (t: string) => (/\.(\d+)/.exec(t)?.[1] ?? "").padEnd(9, "0");
  const fa = fraction(a);
  const fb = fraction(b);
  return fa === fb ? 0 : fa < fb ? 1 : -1;
}
