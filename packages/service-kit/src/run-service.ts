import { API_VERSION, type ServiceName } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { type Bus, createBus } from "@agentplane/events";
import {
  createTelemetry,
  type Telemetry,
  type TelemetryEnv,
  TelemetryEnvSchema,
  telemetrySettings,
  traceRequests,
} from "@agentplane/telemetry";
import { z } from "zod";
import { httpFetch, ServiceClient } from "./client.ts";
import { LogLevelSchema } from "./config.ts";
import { type InternalKeys, importInternalKeys } from "./identity.ts";
import type { UpgradeHandler } from "./instance.ts";
import { createLogger, type Logger } from "./logger.ts";
import { installProcessGuard } from "./process-guard.ts";
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, onShutdown, type RunningServer, serveFetch } from "./serve.ts";

/** `HTTP_KEEP_ALIVE_TIMEOUT_MS`: 1 s to 1 h, 65 s by default (serve.ts says why). */
export const keepAliveTimeoutMs = z.coerce
  .number()
  .int()
  .min(1_000)
  .max(3_600_000)
  .default(DEFAULT_KEEP_ALIVE_TIMEOUT_MS);

/** `SHUTDOWN_DELAY_MS`: 0 to 60 s. */
export const shutdownDelayMs = (defaultMs: number) => z.coerce.number().int().min(0).max(60_000).default(defaultMs);
/** `SHUTDOWN_DRAIN_MS`: 0 to 10 min. */
export const shutdownDrainMs = (defaultMs: number) => z.coerce.number().int().min(0).max(600_000).default(defaultMs);

/**
 * A distributed service's shutdown on SIGTERM (Kubernetes): 5 s still serving while it answers
 * not ready, for the endpoint removal to reach every node and balancer, then up to 20 s for the
 * requests in flight. With the 10 s cleanup deadline, the chart's terminationGracePeriodSeconds
 * (40) covers it.
 */
export const SERVICE_SHUTDOWN = { delayMs: 5_000, drainMs: 20_000 } as const;

/**
 * The deployment variables every distributed service reads besides its own settings: where it
 * listens, its database and bus, the internal identity key and the log level. A service's env
 * schema is `deploymentEnv(<its port>).extend({ …its settings })`.
 */
export function deploymentEnv(defaultPort: number) {
  return z.object({
    PORT: z.coerce.number().int().min(0).max(65_535).default(defaultPort),
    /** The address to listen on: all interfaces by default (containers); 127.0.0.1 for this host only. */
    HOST: z.string().min(1).default("0.0.0.0"),
    /** How long idle keep-alive connections are held: above a load balancer's own idle timeout. */
    HTTP_KEEP_ALIVE_TIMEOUT_MS: keepAliveTimeoutMs,
    /** On SIGTERM/SIGINT: how long it keeps serving while `/health/ready` answers 503. */
    SHUTDOWN_DELAY_MS: shutdownDelayMs(SERVICE_SHUTDOWN.delayMs),
    /** Then: how long requests in flight may take before they are cut. */
    SHUTDOWN_DRAIN_MS: shutdownDrainMs(SERVICE_SHUTDOWN.drainMs),
    DATABASE_URL: z.string().min(1),
    REDIS_URL: z.string().min(1).optional(),
    INTERNAL_IDENTITY_PUBLIC_KEY: z.string().optional(),
    INTERNAL_IDENTITY_PRIVATE_KEY: z.string().optional(),
    LOG_LEVEL: LogLevelSchema.default("info"),
    ...TelemetryEnvSchema.shape,
  });
}

/** What `runService` reads of a service's parsed environment. */
export interface DeploymentEnv {
  PORT: number;
  HOST: string;
  HTTP_KEEP_ALIVE_TIMEOUT_MS?: number | undefined;
  SHUTDOWN_DELAY_MS?: number | undefined;
  SHUTDOWN_DRAIN_MS?: number | undefined;
  DATABASE_URL?: string | undefined;
  REDIS_URL?: string | undefined;
  INTERNAL_IDENTITY_PUBLIC_KEY?: string | undefined;
  INTERNAL_IDENTITY_PRIVATE_KEY?: string | undefined;
  LOG_LEVEL?: string | undefined;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_API_KEY?: string | undefined;
  DEPLOYMENT_ENVIRONMENT?: TelemetryEnv["DEPLOYMENT_ENVIRONMENT"] | undefined;
}

/** What a service's builder gets from the runner. */
export interface RunDeps<E extends DeploymentEnv> {
  env: E;
  keys: InternalKeys;
  logger: Logger;
  bus: Bus;
  /** The database of `DATABASE_URL` (a service whose env requires it always gets one). */
  database: E extends { DATABASE_URL: string } ? Database : Database | undefined;
  /** OpenTelemetry export of this deployable (a no-op without OTEL_EXPORTER_OTLP_ENDPOINT). */
  telemetry: Telemetry;
  /** A client of another service over HTTP keep-alive, signing with this process's keys. */
  client(service: ServiceName, url: string): ServiceClient;
}

/** A built service as the runner serves it. */
export interface RunnableService {
  // biome-ignore lint/suspicious/noExplicitAny: the node server passes its bindings ({ incoming, outgoing }) as env
  fetch(request: Request, env?: any): Response | Promise<Response>;
  handleUpgrade?: UpgradeHandler | undefined;
  /** Stops the service's own background work; the runner closes the bus and database after it. */
  close(): Promise<void> | void;
}

export interface RunServiceOptions<E extends DeploymentEnv, S extends RunnableService> {
  /** The logger's name and the "<name> listening" log line. */
  name: string;
  env: E;
  build(deps: RunDeps<E>): Promise<S> | S;
  /**
   * The deployable's identity keys when not the shared pair of INTERNAL_IDENTITY_* (the egress
   * proxy signs with its own, decision 0062).
   */
  keys?(env: NoInfer<E>, logger: Logger): Promise<InternalKeys>;
  /** Extra fields of the "listening" log line. */
  describe?(service: S): Record<string, unknown>;
  /** False to leave process-level handlers alone (process guard, SIGINT/SIGTERM): tests. */
  processHandlers?: boolean;
}

export interface RunningService<S> {
  service: S;
  server: RunningServer;
  logger: Logger;
  close(): Promise<void>;
}

/**
 * The one start-up of every distributed deployable: logger and process guard, internal keys,
 * database and bus, the service from its builder, the HTTP server (and WebSocket upgrades), and a
 * shutdown on SIGINT/SIGTERM that drains the server (`SHUTDOWN_DELAY_MS`, `SHUTDOWN_DRAIN_MS`) and
 * closes them in reverse order; `close` itself stops at once. A failure to start is thrown (the
 * launcher turns the ones an operator can fix into one line).
 */
export async function runService<E extends DeploymentEnv, S extends RunnableService>(
  options: RunServiceOptions<E, S>,
): Promise<RunningService<S>> {
  const { env, name } = options;
  const logger = createLogger(name, env.LOG_LEVEL ?? "info");
  const processHandlers = options.processHandlers ?? true;
  if (processHandlers) installProcessGuard(logger);
  const keys = options.keys
    ? await options.keys(env, logger)
    : await importInternalKeys({
        ...(env.INTERNAL_IDENTITY_PRIVATE_KEY ? { privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY } : {}),
        ...(env.INTERNAL_IDENTITY_PUBLIC_KEY ? { publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY } : {}),
      });
  const upkeep = { onError: (err: Error) => logger.warn({ err: err.message }, "embedded database upkeep failed") };
  const database = env.DATABASE_URL ? await openDatabase(env.DATABASE_URL, { upkeep }) : undefined;
  const bus = await createBus({ redisUrl: env.REDIS_URL });
  const telemetry = createTelemetry(
    telemetrySettings(
      TelemetryEnvSchema.parse({
        OTEL_EXPORTER_OTLP_ENDPOINT: env.OTEL_EXPORTER_OTLP_ENDPOINT,
        OTEL_EXPORTER_OTLP_API_KEY: env.OTEL_EXPORTER_OTLP_API_KEY,
        DEPLOYMENT_ENVIRONMENT: env.DEPLOYMENT_ENVIRONMENT,
      }),
      name,
      API_VERSION,
    ),
    logger,
  );
  const closeStorage = async () => {
    await bus.close();
    await database?.close();
    await telemetry.shutdown();
  };
  let service: S;
  let server: RunningServer;
  try {
    service = await options.build({
      env,
      keys,
      logger,
      bus,
      database: database as RunDeps<E>["database"],
      telemetry,
      client: (service, url) => new ServiceClient(service, httpFetch(url), keys),
    });
  } catch (err) {
    await closeStorage().catch(() => {});
    throw err;
  }
  try {
    const traced = traceRequests(telemetry, (request: Request, nodeEnv?: unknown) => service.fetch(request, nodeEnv));
    server = await serveFetch((request, nodeEnv) => traced(request, nodeEnv as never), {
      port: env.PORT,
      hostname: env.HOST,
      ...(env.HTTP_KEEP_ALIVE_TIMEOUT_MS !== undefined ? { keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS } : {}),
    });
  } catch (err) {
    await service.close();
    await closeStorage().catch(() => {});
    throw err;
  }
  if (service.handleUpgrade) server.server.on("upgrade", service.handleUpgrade);
  logger.info({ url: server.url, ...options.describe?.(service) }, `${name} listening`);
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      await server.close();
      await service.close();
      await closeStorage();
    })();
    return closed;
  };
  if (processHandlers) {
    onShutdown(close, logger, {
      servers: [server],
      delayMs: env.SHUTDOWN_DELAY_MS ?? SERVICE_SHUTDOWN.delayMs,
      drainMs: env.SHUTDOWN_DRAIN_MS ?? SERVICE_SHUTDOWN.drainMs,
    });
  }
  return { service, server, logger, close };
}
