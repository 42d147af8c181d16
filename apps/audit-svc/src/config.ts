import { z } from "zod";
import type { ConsumerOptions } from "./ingest/consumer.ts";
import type { PriceTable } from "./services/pricing.ts";

/** What `createAuditService` takes as configuration (main.ts builds it from the environment). */
export interface AuditConfig {
  /** Audit records older than this are pruned (default 365). */
  retentionDays?: number;
  /** Entries that override the bundled price table (by canonical model name or exact id). */
  priceOverrides?: PriceTable;
  /** Unsettled reservations are released after this long (default 10 minutes). */
  reservationTtlMs?: number;
  /** How often retention and reservation expiry run (default 30 s; retention itself at most hourly). */
  maintenanceIntervalMs?: number;
  /** False to run no maintenance timer (tests call the jobs directly). */
  maintenance?: boolean;
  consumer?: ConsumerOptions;
}

export const AuditEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8083),
  /** The address to listen on: all interfaces by default (containers); 127.0.0.1 for this host only. */
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z.string().min(1),
  REDIS_URL: z.string().min(1).optional(),
  INTERNAL_IDENTITY_PUBLIC_KEY: z.string().optional(),
  INTERNAL_IDENTITY_PRIVATE_KEY: z.string().optional(),
  TENANCY_URL: z.url(),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().positive().default(365),
  /** The price overrides as JSON, or a path to a JSON file. */
  PRICE_TABLE_JSON: z.string().optional(),
  LOG_LEVEL: z.string().default("info"),
});
export type AuditEnv = z.infer<typeof AuditEnvSchema>;
