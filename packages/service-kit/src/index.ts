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
export {
  type AuthorizationQuestion,
  type Authorizer,
  type AuthzScope,
  authorize,
  type Caller,
  noteDecision,
  type ProjectCaller,
  RemoteAuthorizer,
  type Requester,
  requesterOf,
  withSandboxTokens,
} from "./authorize.ts";
export {
  BUFFERED_RESPONSE_BYTES,
  type HttpServiceFetch,
  httpFetch,
  inProcessFetch,
  isDotSegment,
  NULL_BODY_STATUSES,
  type OutgoingRequest,
  type ResponseHeaders,
  ServiceClient,
  type ServiceFetch,
} from "./client.ts";
export { ConfigError, ENV_BOOLEAN_VALUES, envBoolean, envKey32, LogLevelSchema, parseEnv } from "./config.ts";
export { DecisionCache, type DecisionCacheOptions } from "./decision-cache.ts";
export {
  type CheckState,
  checkReadiness,
  healthResponse,
  READINESS_TIMEOUT_MS,
  type Readiness,
  type ReadinessCheck,
  type ReadinessChecks,
  telemetryHealth,
} from "./health.ts";
export { answerClientError, refuseWithoutHost, unusableRequest } from "./http-refusals.ts";
export {
  generateInternalKeys,
  type IdentityRequest,
  IdentitySigner,
  IdentityVerifier,
  type InternalKeys,
  importInternalKeys,
  importOwnKeys,
  importScopedPublicKey,
  type SignIdentityOptions,
  servicePrincipal,
  signIdentity,
  type VerifiedIdentity,
  verifyIdentity,
} from "./identity.ts";
export type { ServiceInstance, UpgradeHandler } from "./instance.ts";
export {
  callInternal,
  type InternalAnswer,
  type InternalCall,
  internalRoute,
  serviceOnly,
} from "./internal-route.ts";
export { createLogger, LOG_REDACT_PATHS, LOG_REDACTION, type Logger, silentLogger } from "./logger.ts";
export {
  enforceObjectLimit,
  envObjectLimits,
  limitExceeded,
  MAX_OBJECT_LIMIT,
  type ObjectLimitCheck,
  ObjectLimitsSettingSchema,
  objectLimitLock,
  objectLimitsOr,
} from "./object-limits.ts";
export {
  OIDC_EMAIL_TRUST_VALUES,
  type OidcEmailTrust,
  OidcEmailTrustSchema,
  trustedOidcEmail,
  unvouchedOidcEmail,
} from "./oidc-email.ts";
export { installProcessGuard, type ProcessFaults, processFaults } from "./process-guard.ts";
export { noteResourceOrg, withResourceOrg } from "./resource-org.ts";
export {
  type DeploymentEnv,
  deploymentEnv,
  keepAliveTimeoutMs,
  type RunDeps,
  type RunnableService,
  type RunningService,
  type RunServiceOptions,
  runService,
  SERVICE_SHUTDOWN,
  shutdownDelayMs,
  shutdownDrainMs,
} from "./run-service.ts";
export {
  type ScopedIdentityKey,
  type ScopedRoute,
  scopedIssuer,
  scopedRouteAllows,
} from "./scoped-identity.ts";
export {
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  type DrainResult,
  type DrainTiming,
  holdIdleConnections,
  onShutdown,
  type RunningServer,
  SHUTDOWN_CLEANUP_MS,
  type ShutdownDrain,
  serveFetch,
} from "./serve.ts";
export { guardSocket, HOP_BY_HOP_HEADERS, rejectUpgrade, spliceUpgrade } from "./upgrade.ts";
export { type CallOutcome, UpstreamCall, type UpstreamCallEvents, type UpstreamRequest } from "./upstream-call.ts";
export { readAtMost, webStreamOf } from "./web-stream.ts";
export { WorkerLane, type WorkerLaneOptions, type WorkerLaneSpec } from "./worker-lane.ts";
