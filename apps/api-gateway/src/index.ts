export { createGateway, type Gateway } from "./app.ts";
export {
  Authenticator,
  type AuthenticatorOptions,
  bearerToken,
  type OpaqueTokenResolver,
} from "./authn/authenticator.ts";
export { OidcVerifier } from "./authn/oidc.ts";
export { type BuildGatewayOptions, type BuiltGateway, buildGateway, httpTargets } from "./build.ts";
export {
  configFromEnv as gatewayConfigFromEnv,
  configFromSettings as gatewayConfigFromSettings,
  type GatewayConfig,
  type GatewayEnv,
  GatewayEnvSchema,
  type GatewaySettings,
  GatewaySettingsSchema,
  type RateLimitConfig,
  serviceUrls,
} from "./config.ts";
export { DEFAULT_BODY_LIMITS, type GatewayDeps, type GatewayTarget } from "./deps.ts";
export { createHttpIngress } from "./ingress.ts";
export type { IngressRouter, IngressTarget } from "./ingress-router.ts";
export { createRateLimiter, MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from "./rate-limit.ts";
export { type RouteEntry, RouteTable } from "./route-table.ts";
export type { UpgradeTarget } from "./upgrade.ts";
