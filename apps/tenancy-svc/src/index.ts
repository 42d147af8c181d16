export { createTenancyService, TENANCY_SCHEMA, type TenancyDeps, type TenancyService } from "./app.ts";
export { actorOf, LocalAuthorizer, tokenProjectCap } from "./authz/local-authorizer.ts";
export {
  configFromEnv as tenancyConfigFromEnv,
  oidcSignInGap,
  type TenancySettings,
  TenancySettingsSchema,
} from "./config.ts";
export type { TenancyConfig } from "./context.ts";
export { currentSigningKey, publishedKeys, SIGNING_ALG } from "./keys/signing-keys.ts";
