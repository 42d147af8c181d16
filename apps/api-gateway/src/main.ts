// The gateway as its own deployable (distributed mode): services are reached over HTTP keep-alive.
import {
  CONNECTIONS_INTERNAL,
  SANDBOX_INTERNAL,
  SANDBOX_TOKEN_PREFIX,
  type ServiceName,
  TUNNEL_TOKEN_PREFIX,
} from "@agentplane/contracts";
import { createBus } from "@agentplane/events";
import {
  createLogger,
  httpFetch,
  importInternalKeys,
  installProcessGuard,
  onShutdown,
  parseEnv,
  ServiceClient,
  serveFetch,
} from "@agentplane/service-kit";
import { createGateway, type GatewayTarget } from "./app.ts";
import { Authenticator } from "./authn/authenticator.ts";
import { OidcVerifier } from "./authn/oidc.ts";
import { GatewayEnvSchema } from "./config.ts";
import { remoteReadiness } from "./health.ts";
import { createHttpIngress } from "./ingress.ts";
import { createRateLimiter } from "./rate-limit.ts";

const env = parseEnv(GatewayEnvSchema);
const logger = createLogger("api-gateway", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({ privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY });
const bus = createBus({ redisUrl: env.REDIS_URL });

const urls: Partial<Record<ServiceName, string | undefined>> = {
  tenancy: env.TENANCY_URL,
  sandbox: env.SANDBOX_URL,
  audit: env.AUDIT_URL,
  governance: env.GOVERNANCE_URL,
  connections: env.CONNECTIONS_URL,
  inference: env.INFERENCE_URL,
};
const targets: Partial<Record<ServiceName, GatewayTarget>> = {};
for (const [name, url] of Object.entries(urls) as [ServiceName, string | undefined][]) {
  if (!url) continue;
  const fetch = httpFetch(url);
  targets[name] = { fetch, upgrade: { kind: "http", url }, ...remoteReadiness(fetch) };
}

const limiter = createRateLimiter({ redisUrl: env.REDIS_URL, limitPerMinute: env.RATE_LIMIT_PER_MINUTE, logger });
const gateway = createGateway({
  targets,
  keys,
  authenticator: new Authenticator({
    tenancy: new ServiceClient("tenancy", targets.tenancy!.fetch, keys),
    opaqueResolvers: [
      ...(targets.sandbox
        ? [
            {
              prefix: SANDBOX_TOKEN_PREFIX,
              client: new ServiceClient("sandbox", targets.sandbox.fetch, keys),
              path: SANDBOX_INTERNAL.resolveSandboxToken,
            },
          ]
        : []),
      // Cluster relays open their tunnel with a tunnel token, resolved by connections-svc.
      ...(targets.connections
        ? [
            {
              prefix: TUNNEL_TOKEN_PREFIX,
              client: new ServiceClient("connections", targets.connections.fetch, keys),
              path: CONNECTIONS_INTERNAL.resolveTunnelToken,
            },
          ]
        : []),
    ],
    oidc: env.OIDC_ISSUER
      ? new OidcVerifier({
          issuer: env.OIDC_ISSUER,
          audience: env.OIDC_AUDIENCE,
          maxClockSkewSeconds: env.OIDC_MAX_CLOCK_SKEW_SECONDS,
        })
      : undefined,
    logger,
  }),
  rateLimiter: limiter.rateLimiter,
  rateLimit: limiter.rateLimit,
  bus,
  logger,
  ...(env.PUBLIC_URL ? { publicUrl: env.PUBLIC_URL } : {}),
  ...(env.SANDBOX_INGRESS_HOST && env.SANDBOX_URL && targets.sandbox
    ? {
        ingress: createHttpIngress({
          sandboxUrl: env.SANDBOX_URL,
          ingressHost: env.SANDBOX_INGRESS_HOST,
          keys,
          fetch: targets.sandbox.fetch,
        }),
      }
    : {}),
});

const server = await serveFetch((req, nodeEnv) => gateway.fetch(req, nodeEnv), {
  port: env.PORT,
  hostname: env.HOST,
});
server.server.on("upgrade", gateway.handleUpgrade);
logger.info({ url: server.url, services: Object.keys(targets) }, "api gateway listening");
onShutdown(async () => {
  await server.close();
  gateway.close();
  await bus.close();
  limiter.close();
}, logger);
