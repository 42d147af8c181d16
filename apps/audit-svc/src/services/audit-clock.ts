/**
 * The per-record inputs of an audit batch's clock, worked out here instead of by window functions
 * in the store statement (which cost Postgres a sort and two window passes per batch). For the
 * records of one clock (organization), numbered k = 1, 2, ... by event time (then id), the stored
 * timestamp in microseconds is `k + max(clock, m_k)` with `m_k = max over j <= k of (at_j - j)`:
 * each record at least one microsecond after the one before it, and after the clock.
 */
export interface ClockInputs {
  /** The record's number within its clock, from 1. */
  k: number[];
  /** `m_k` as decimal text (microseconds since the epoch, beyond float precision in general). */
  m: string[];
}

/** Plain ISO 8601 with a zone: what producers send. Anything else is left to Postgres to read. */
const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Microseconds since the epoch, as Postgres reads the text into a timestamptz (the fraction rounded
 * to the microsecond); undefined for text that is not plain ISO 8601.
 */
export function epochMicros(time: string): number | undefined {
  const match = ISO.exec(time);
  if (!match) return undefined;
  const seconds = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  const fraction = match[2] ? roundHalfEven(Number(`0.${match[2]}`) * 1e6) : 0;
  return seconds * 1000 + fraction;
}

/** C's `rint` in the default rounding mode, which Postgres applies to the fraction times 10^6. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * `k` and `m` for each record, in the order given; undefined when a time is not plain ISO 8601
 * (the statement then works them out itself, and a time Postgres cannot read fails the record).
 */
export function clockInputs(records: readonly { clock: string; id: string; time: string }[]): ClockInputs | undefined {
  const at: number[] = new Array(records.length);
  for (let i = 0; i < records.length; i++) {
    const micros = epochMicros(records[i]!.time);
    if (micros === undefined) return undefined;
    at[i] = micros;
  }
  const order = records.map((_r, i) => i);
  order.sort((a, b) => {
    const x = records[a]!;
    const y = records[b]!;
    if (x.clock !== y.clock) return x.clock < y.clock ? -1 : 1;
    if (at[a] !== at[b]) return at[a]! - at[b]!;
    return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  });
  const k: number[] = new Array(records.length);
  const m: string[] = new Array(records.length);
  let clock: string | undefined;
  let rank = 0;
  let best = Number.NEGATIVE_INFINITY;
  for (const i of order) {
    const record = records[i]!;
    if (record.clock !== clock) {
      clock = record.clock;
      rank = 0;
      best = Number.NEGATIVE_INFINITY;
    }
    rank++;
    best = Math.max(best, at[i]! - rank);
    k[i] = rank;
    m[i] = String(best);
  }
  return { k, m };
}
