import type { ServiceName } from "@agentplane/contracts";
import type { Bus } from "@agentplane/events";
import type { InternalKeys, Logger, Readiness, ServiceFetch } from "@agentplane/service-kit";
import type { AgentRuntimeTarget } from "./agent-front.ts";
import type { Authenticator } from "./authn/authenticator.ts";
import type { RateLimitConfig } from "./config.ts";
import type { ConsoleAssets } from "./console-assets.ts";
import type { IngressRouter } from "./ingress-router.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { UpgradeTarget } from "./upgrade.ts";

/** Where the gateway sends a service's requests: in process or over HTTP. */
export interface GatewayTarget {
  fetch: ServiceFetch;
  upgrade?: UpgradeTarget;
  ready(): Promise<boolean>;
  /** Each dependency of the service (database, bus, driver), when it reports them. */
  readiness?(): Promise<Readiness>;
}

export interface GatewayDeps {
  targets: Partial<Record<ServiceName, GatewayTarget>>;
  keys: InternalKeys;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  rateLimit: RateLimitConfig;
  /** All of a user's tokens and sessions together (RATE_LIMIT_PER_USER_PER_MINUTE). */
  userRateLimiter: RateLimiter;
  userRateLimit: RateLimitConfig;
  bus: Bus;
  logger?: Logger;
  publicUrl?: string;
  /** Host-based ingress to exposed sandbox ports, when SANDBOX_INGRESS_HOST is configured. */
  ingress?: IngressRouter;
  /** Request body limits per service where they differ from 1 MiB (default: inference 20 MiB). */
  bodyLimits?: Partial<Record<ServiceName, number>>;
  /** The admin console's built pages, served at `/` (everything that is not an API path). */
  console?: ConsoleAssets;
  /** The agent runtime fronted at /agent (distributed: AGENT_RUNTIME_URL); the all-in-one connects it later. */
  agentRuntime?: AgentRuntimeTarget;
  /** How long that runtime may take to start answering (default 300 s); past it, a 504 problem. */
  agentRuntimeTimeoutMs?: number;
  /** TRUSTED_PROXIES: proxies whose X-Forwarded-For names the client (the socket's peer otherwise). */
  trustedProxies?: string;
}

/** Model requests carry whole conversations; the inference proxy applies its own cap below this. */
export const DEFAULT_BODY_LIMITS: Partial<Record<ServiceName, number>> = { inference: 20 * 1024 * 1024 };
