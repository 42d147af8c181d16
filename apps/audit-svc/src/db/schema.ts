/** The Postgres schema audit-svc owns. */
export const AUDIT_SCHEMA = "audit";

import type { Generated } from "kysely";

/** One audit record; `ts` is unique per organization and is the pagination key. */
export interface AuditRecordsTable {
  event_id: string;
  org_id: string | null;
  project_id: string | null;
  /** Written as an ISO string with microseconds; read back through `to_char` (drivers truncate to ms). */
  ts: string;
  occurred_at: string;
  principal_type: string;
  principal_id: string | null;
  principal_name: string | null;
  action: string;
  source: string;
  target_type: string | null;
  target_id: string | null;
  /** jsonb: written as part of a JSON batch, read back parsed. */
  targets: unknown;
  outcome: string;
  status: number | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  method: string | null;
  path: string | null;
  details: unknown;
}

/** The newest `ts` handed out per organization (the high-water mark that keeps timestamps unique). */
export interface OrgClocksTable {
  org_id: string;
  last_ts: string;
}

export interface UsageRecordsTable {
  event_id: string;
  org_id: string;
  project_id: string | null;
  principal_type: string;
  principal_id: string;
  provider: string;
  model: string;
  route: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_micro_usd: number;
  priced: boolean;
  request_id: string | null;
  reservation_id: string | null;
  ts: string;
}

export interface SpendingLimitsTable {
  id: string;
  org_id: string;
  project_id: string | null;
  amount_micro_usd: number;
  period: "monthly" | "daily";
  alert_thresholds: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/**
 * A limit removed when one limit per scope and period became the rule: the row as it was, and the
 * limit kept in its place (the strictest of its group).
 */
export interface SpendingLimitDuplicatesTable extends Omit<SpendingLimitsTable, "created_at" | "updated_at"> {
  kept_id: string;
  created_at: Date;
  updated_at: Date;
  removed_at: Generated<Date>;
}

/** Spend of one limit in one period; the row lock on it serializes reservations against the limit. */
export interface SpendCountersTable {
  limit_id: string;
  period_start: Date | string;
  spent_micro_usd: Generated<number>;
  reserved_micro_usd: Generated<number>;
  /** Highest alert threshold already reported for this period (0: none). */
  alerted_threshold: Generated<number>;
  reached: Generated<boolean>;
}

export interface ReservationsTable {
  id: string;
  org_id: string;
  project_id: string | null;
  amount_micro_usd: number;
  state: "active" | "settled" | "released" | "expired";
  settled_micro_usd: number | null;
  request_id: string | null;
  /** The call reserved for (SpendReserveRequest.call), as JSON; null when the producer sent none. */
  call: string | null;
  created_at: Generated<Date>;
  expires_at: Date | string;
}

export interface ReservationHoldsTable {
  reservation_id: string;
  limit_id: string;
  period_start: Date | string;
}

/** An event whose content storage rejects, kept for inspection instead of being dropped. */
export interface DeadLettersTable {
  event_id: string;
  topic: string;
  /** The event as JSON text. */
  payload: string;
  error: string;
  created_at: Generated<Date>;
}

export interface AuditDb {
  dead_letters: DeadLettersTable;
  audit_records: AuditRecordsTable;
  org_clocks: OrgClocksTable;
  usage_records: UsageRecordsTable;
  spending_limits: SpendingLimitsTable;
  spending_limit_duplicates: SpendingLimitDuplicatesTable;
  spend_counters: SpendCountersTable;
  reservations: ReservationsTable;
  reservation_holds: ReservationHoldsTable;
}
