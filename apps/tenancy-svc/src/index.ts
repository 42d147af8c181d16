export { createTenancyService, TENANCY_SCHEMA, type TenancyDeps, type TenancyService } from "./app.ts";
export { actorOf, LocalAuthorizer, tokenProjectCap } from "./authz/local-authorizer.ts";
export type { TenancyConfig } from "./config.ts";
export {
  configFromEnv as tenancyConfigFromEnv,
  configFromSettings as tenancyConfigFromSettings,
  oidcSignInGap,
  type TenancyEnv,
  TenancyEnvSchema,
  type TenancySettings,
  TenancySettingsSchema,
} from "./config.ts";
export { currentSigningKey, publishedKeys, SIGNING_ALG } from "./keys/signing-keys.ts";
