import { type PriceTable, priceOverridesSetting } from "@agentplane/pricing";
import { deploymentEnv, parseEnv } from "@agentplane/service-kit";
import { z } from "zod";
import type { ConsumerOptions } from "./ingest/consumer.ts";

const DAY_MS = 24 * 3_600_000;
/** Audit records are kept this many days unless configured otherwise. */
export const DEFAULT_RETENTION_DAYS = 365;
/** Finished reservations are kept this long unless configured otherwise: far longer than any usage report is late. */
export const DEFAULT_RESERVATION_RETENTION_MS = 7 * DAY_MS;

/** What `createAuditService` takes as configuration (main.ts builds it from the environment). */
export interface AuditConfig {
  /** Audit records older than this are pruned (default 365). */
  retentionDays?: number;
  /** Entries that override the bundled price table (by canonical model name or exact id). */
  priceOverrides?: PriceTable;
  /** Unsettled reservations are released after this long (default 10 minutes). */
  reservationTtlMs?: number;
  /** Finished reservations are deleted this long after they were opened (default 7 days). */
  reservationRetentionMs?: number;
  /** How often retention and reservation expiry run (default 30 s; retention itself at most hourly). */
  maintenanceIntervalMs?: number;
  /** False to run no maintenance timer (tests call the jobs directly). */
  maintenance?: boolean;
  consumer?: ConsumerOptions;
}

/** audit-svc's own settings, read the same way by its deployable and the all-in-one launcher. */
export const AuditSettingsSchema = z.object({
  AUDIT_RETENTION_DAYS: z.coerce.number().int().positive().default(DEFAULT_RETENTION_DAYS),
  /** Finished spend reservations are deleted this many days after they were opened. */
  RESERVATION_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .positive()
    .default(DEFAULT_RESERVATION_RETENTION_MS / DAY_MS),
  /** The price overrides as JSON, or a path to a JSON file. */
  PRICE_TABLE_JSON: z.string().optional(),
});
export type AuditSettings = z.infer<typeof AuditSettingsSchema>;

/** audit-svc as its own deployable: the deployment variables, tenancy's URL and its settings. */
export const AuditEnvSchema = deploymentEnv(8083).extend({
  TENANCY_URL: z.url(),
  ...AuditSettingsSchema.shape,
});
export type AuditEnv = z.infer<typeof AuditEnvSchema>;

/** audit-svc's configuration from the environment (its settings only; a bad one names the variable). */
export function configFromEnv(env: Record<string, string | undefined>): AuditConfig {
  return configFromSettings(parseEnv(AuditSettingsSchema, env));
}

/** audit-svc's configuration from its parsed settings. */
export function configFromSettings(settings: AuditSettings): AuditConfig {
  return {
    retentionDays: settings.AUDIT_RETENTION_DAYS,
    reservationRetentionMs: settings.RESERVATION_RETENTION_DAYS * DAY_MS,
    priceOverrides: priceOverridesSetting(settings.PRICE_TABLE_JSON),
  };
}
