import { AUDIT_RECORDED, AuditRecordedSchema } from "./audit.ts";
import { USAGE_RECORDED, UsageRecordedSchema } from "./usage.ts";

export * from "./audit.ts";
export * from "./usage.ts";

/** The event catalog: topic → payload schema. */
export const EVENT_CATALOG = {
  [AUDIT_RECORDED]: AuditRecordedSchema,
  [USAGE_RECORDED]: UsageRecordedSchema,
} as const;
export type TopicName = keyof typeof EVENT_CATALOG;
