import { AUDIT_RECORDED, AuditRecordedSchema } from "./audit.ts";
import { CREDENTIALS_REVOKED, CredentialsRevokedSchema } from "./credentials.ts";
import { USAGE_RECORDED, UsageRecordedSchema } from "./usage.ts";

export * from "./audit.ts";
export * from "./credentials.ts";
export * from "./usage.ts";

/** The event catalog: topic → payload schema (`CREDENTIALS_REVOKED` travels as a notice). */
export const EVENT_CATALOG = {
  [AUDIT_RECORDED]: AuditRecordedSchema,
  [CREDENTIALS_REVOKED]: CredentialsRevokedSchema,
  [USAGE_RECORDED]: UsageRecordedSchema,
} as const;
export type TopicName = keyof typeof EVENT_CATALOG;
