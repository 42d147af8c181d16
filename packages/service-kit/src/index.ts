export {
  createServiceApp,
  MAX_BODY_BYTES,
  requirePrincipal,
  type ServiceApp,
  type ServiceAppOptions,
  type ServiceContext,
  type ServiceEnv,
  type ServiceVariables,
} from "./app.ts";
export { type Authorizer, type AuthzScope, authorize, RemoteAuthorizer } from "./authorize.ts";
export { httpFetch, inProcessFetch, ServiceClient, type ServiceFetch } from "./client.ts";
export { ConfigError, envBoolean, parseEnv } from "./config.ts";
export {
  generateInternalKeys,
  IdentitySigner,
  IdentityVerifier,
  type InternalKeys,
  importInternalKeys,
  type SignIdentityOptions,
  servicePrincipal,
  signIdentity,
  type VerifiedIdentity,
  verifyIdentity,
} from "./identity.ts";
export type { ServiceInstance, UpgradeHandler } from "./instance.ts";
export { createLogger, type Logger, silentLogger } from "./logger.ts";
export { onShutdown, type RunningServer, serveFetch } from "./serve.ts";
export { HOP_BY_HOP_HEADERS, rejectUpgrade, spliceUpgrade } from "./upgrade.ts";
