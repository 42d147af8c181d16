import {
  internalResolveSandboxTokenRoute,
  internalResolveTunnelTokenRoute,
  SANDBOX_TOKEN_PREFIX,
  type ServiceName,
  TUNNEL_TOKEN_PREFIX,
} from "@agentplane/contracts";
import type { Bus } from "@agentplane/events";
import { httpFetch, type InternalKeys, type Logger, ServiceClient } from "@agentplane/service-kit";
import type { AgentRuntimeTarget } from "./agent-front.ts";
import { createGateway, type Gateway } from "./app.ts";
import { Authenticator } from "./authn/authenticator.ts";
import { OidcVerifier } from "./authn/oidc.ts";
import type { GatewayConfig } from "./config.ts";
import { consoleAssets } from "./console-assets.ts";
import type { GatewayTarget } from "./deps.ts";
import { remoteReadiness } from "./health.ts";
import { createHttpIngress } from "./ingress.ts";
import type { IngressRouter } from "./ingress-router.ts";
import { createRateLimiter } from "./rate-limit.ts";

export interface BuildGatewayOptions {
  config: GatewayConfig;
  /** The services behind the gateway: in process (all-in-one) or over HTTP (`httpTargets`). */
  targets: Partial<Record<ServiceName, GatewayTarget>>;
  keys: InternalKeys;
  bus: Bus;
  logger: Logger;
  /**
   * How sandbox ingress hosts reach sandbox-svc when `config.ingressHost` is set: in process, or
   * (when absent) over HTTP at `sandboxUrl`.
   */
  ingress?: IngressRouter;
  sandboxUrl?: string;
  /** Overrides `config.publicUrl` (the all-in-one knows its own address when PUBLIC_URL is unset). */
  publicUrl?: string;
  /** The admin console's build (apps/console/dist), served at `/`. */
  consoleDir?: string;
  /** The agent runtime fronted at /agent (the all-in-one connects its own later). */
  agentRuntime?: AgentRuntimeTarget;
}

export interface BuiltGateway extends Gateway {
  /** The configuration it was built from. */
  config: GatewayConfig;
}

/** Targets over HTTP keep-alive, one per configured service URL (the distributed gateway). */
export function httpTargets(urls: Partial<Record<ServiceName, string>>): Partial<Record<ServiceName, GatewayTarget>> {
  const targets: Partial<Record<ServiceName, GatewayTarget>> = {};
  for (const [name, url] of Object.entries(urls) as [ServiceName, string][]) {
    const fetch = httpFetch(url);
    targets[name] = { fetch, upgrade: { kind: "http", url }, ...remoteReadiness(fetch) };
  }
  return targets;
}

/**
 * The one way a gateway is built, by its own deployable and by the all-in-one launcher: rate
 * limiter, authentication (API tokens through tenancy, sandbox and tunnel tokens through their
 * services, OIDC JWTs of the configured issuer), ingress, and the dispatch to the targets.
 */
export function buildGateway(options: BuildGatewayOptions): BuiltGateway {
  const { config, targets, keys, bus, logger } = options;
  const tenancy = targets.tenancy;
  if (!tenancy) throw new Error("the gateway needs tenancy (TENANCY_URL) to authenticate requests");
  const limiter = createRateLimiter({
    redisUrl: config.redisUrl,
    limitPerMinute: config.rateLimitPerMinute,
    userLimitPerMinute: config.rateLimitPerUserPerMinute,
    logger,
  });
  const authenticator = new Authenticator({
    tenancy: new ServiceClient("tenancy", tenancy.fetch, keys),
    opaqueResolvers: [
      ...(targets.sandbox
        ? [
            {
              prefix: SANDBOX_TOKEN_PREFIX,
              client: new ServiceClient("sandbox", targets.sandbox.fetch, keys),
              route: internalResolveSandboxTokenRoute,
            },
          ]
        : []),
      // Cluster relays open their tunnel with a tunnel token, resolved by connections-svc.
      ...(targets.connections
        ? [
            {
              prefix: TUNNEL_TOKEN_PREFIX,
              client: new ServiceClient("connections", targets.connections.fetch, keys),
              route: internalResolveTunnelTokenRoute,
            },
          ]
        : []),
    ],
    oidc: config.oidc ? new OidcVerifier(config.oidc) : undefined,
    logger,
  });
  let ingress = options.ingress;
  if (!ingress && config.ingressHost && options.sandboxUrl && targets.sandbox) {
    ingress = createHttpIngress({
      sandboxUrl: options.sandboxUrl,
      ingressHost: config.ingressHost,
      keys,
      fetch: targets.sandbox.fetch,
    });
  }
  const publicUrl = options.publicUrl ?? config.publicUrl;
  const gateway = createGateway({
    targets,
    keys,
    authenticator,
    rateLimiter: limiter.rateLimiter,
    rateLimit: limiter.rateLimit,
    userRateLimiter: limiter.userRateLimiter,
    userRateLimit: limiter.userRateLimit,
    bus,
    logger,
    ...(publicUrl ? { publicUrl } : {}),
    ...(config.ingressHost && ingress ? { ingress } : {}),
    ...(options.consoleDir ? { console: consoleAssets(options.consoleDir) } : {}),
    ...(options.agentRuntime ? { agentRuntime: options.agentRuntime } : {}),
    agentRuntimeTimeoutMs: config.agentRuntimeTimeoutMs,
    ...(config.trustedProxies ? { trustedProxies: config.trustedProxies } : {}),
  });
  return {
    ...gateway,
    config,
    close() {
      gateway.close();
      limiter.close();
    },
  };
}
