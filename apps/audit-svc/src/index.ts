export { AUDIT_SCHEMA, type AuditService, type AuditServiceDeps, createAuditService } from "./app.ts";
export {
  type AuditConfig,
  type AuditEnv,
  AuditEnvSchema,
  type AuditSettings,
  AuditSettingsSchema,
  configFromEnv as auditConfigFromEnv,
  configFromSettings as auditConfigFromSettings,
  priceOverridesSetting,
} from "./config.ts";
export {
  BUNDLED_PRICES,
  canonicalModel,
  type ModelPrice,
  type PriceTable,
  Pricing,
  parsePriceOverrides,
} from "./services/pricing.ts";
