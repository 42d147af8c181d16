import {
  Authenticator,
  createGateway,
  type Gateway,
  type GatewayTarget,
  MemoryRateLimiter,
  OidcVerifier,
  RedisRateLimiter,
} from "@agentplane/api-gateway";
import type { ServiceName } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import type { Bus } from "@agentplane/events";
import {
  generateInternalKeys,
  inProcessFetch,
  type Logger,
  type RunningServer,
  type ServiceInstance,
  ServiceClient,
  serveFetch,
} from "@agentplane/service-kit";
import { createTenancyService } from "@agentplane/tenancy-svc";
import { Redis } from "ioredis";
import type { AllInOneEnv } from "./config.ts";
import { loadOrCreateSecretKey } from "./secrets.ts";

export interface Platform {
  url: string;
  publicUrl: string;
  server: RunningServer;
  gateway: Gateway;
  services: Partial<Record<ServiceName, ServiceInstance>>;
  /** Printed at first start while the installation is not activated. */
  setupCode: string | undefined;
  close(): Promise<void>;
}

export interface AssembleOptions {
  env: AllInOneEnv;
  dataDir: string;
  database: Database;
  bus: Bus;
  logger: Logger;
}

function inProcessTarget(instance: ServiceInstance): GatewayTarget {
  return {
    fetch: inProcessFetch(instance),
    ...(instance.handleUpgrade ? { upgrade: { kind: "in-process" as const, handle: instance.handleUpgrade } } : {}),
    ready: () => instance.ready(),
  };
}

/**
 * Builds every service in this process on one database and bus and puts the gateway in front,
 * dispatching in process. The same services run as separate deployables in the distributed mode.
 */
export async function assemblePlatform(options: AssembleOptions): Promise<Platform> {
  const { env, database, bus, logger } = options;
  const keys = await generateInternalKeys();
  const secretKey = loadOrCreateSecretKey(options.dataDir, env.AGENTPLANE_SECRET_KEY);
  // The listening port is only known after listen; PUBLIC_URL wins when set.
  let publicUrl = env.PUBLIC_URL ?? `http://localhost:${env.PORT}`;

  const tenancy = await createTenancyService({
    database,
    bus,
    keys,
    logger: logger.child({ service: "tenancy" }),
    config: {
      secretKey,
      publicUrl: () => publicUrl,
      keyRotationGraceSeconds: env.KEY_ROTATION_GRACE_SECONDS,
      ...(env.AGENTPLANE_BOOTSTRAP_TOKEN ? { bootstrapToken: env.AGENTPLANE_BOOTSTRAP_TOKEN } : {}),
    },
  });
  const services: Partial<Record<ServiceName, ServiceInstance>> = { tenancy };

  const targets: Partial<Record<ServiceName, GatewayTarget>> = {};
  for (const [name, instance] of Object.entries(services) as [ServiceName, ServiceInstance][]) {
    targets[name] = inProcessTarget(instance);
  }

  const rateLimit = { limit: env.RATE_LIMIT_PER_MINUTE, windowSeconds: 60 };
  const redis = env.REDIS_URL ? new Redis(env.REDIS_URL, { maxRetriesPerRequest: 1 }) : undefined;
  redis?.on("error", () => {});
  const gateway = createGateway({
    targets,
    keys,
    authenticator: new Authenticator({
      tenancy: new ServiceClient("tenancy", inProcessFetch(tenancy), keys),
      oidc: env.OIDC_ISSUER ? new OidcVerifier({ issuer: env.OIDC_ISSUER, audience: env.OIDC_AUDIENCE }) : undefined,
      logger,
    }),
    rateLimiter: redis ? new RedisRateLimiter(redis, rateLimit) : new MemoryRateLimiter(rateLimit),
    rateLimit,
    bus,
    logger,
    publicUrl,
  });

  const server = await serveFetch((req, nodeEnv) => gateway.fetch(req, nodeEnv), { port: env.PORT, hostname: env.HOST });
  server.server.on("upgrade", gateway.handleUpgrade);
  if (!env.PUBLIC_URL) publicUrl = `http://localhost:${server.port}`;

  return {
    url: server.url,
    publicUrl,
    server,
    gateway,
    services,
    setupCode: tenancy.setupCode,
    async close() {
      await server.close();
      gateway.close();
      await Promise.allSettled(Object.values(services).map((s) => s.close()));
      redis?.disconnect();
    },
  };
}
