export { AUDIT_SCHEMA, type AuditService, type AuditServiceDeps, createAuditService } from "./app.ts";
export {
  type AuditConfig,
  type AuditEnv,
  AuditEnvSchema,
  type AuditSettings,
  AuditSettingsSchema,
  configFromEnv as auditConfigFromEnv,
  configFromSettings as auditConfigFromSettings,
} from "./config.ts";
