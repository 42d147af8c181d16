import { join } from "node:path";
import {
  type BuiltGateway,
  buildGateway,
  type GatewayTarget,
  gatewayConfigFromSettings,
  type IngressRouter,
} from "@agentplane/api-gateway";
import { auditConfigFromSettings, createAuditService } from "@agentplane/audit-svc";
import {
  connectionsConfigFromSettings,
  createConnectionsService,
  TenancyProjectSigner,
} from "@agentplane/connections-svc";
import { ensureConsoleBuild } from "@agentplane/console";
import { API_VERSION, parseIngressHost, type ServiceName } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import type { Bus } from "@agentplane/events";
import { createGovernanceService, governanceConfigFromSettings } from "@agentplane/governance-svc";
import { createInferenceService, type InferenceConfig, inferenceConfigFromSettings } from "@agentplane/inference-proxy";
import { Pricing } from "@agentplane/pricing";
import { ProblemError, problemResponse } from "@agentplane/problem-details";
import { createSandboxService, type SandboxService, sandboxConfigFromSettings } from "@agentplane/sandbox-svc";
import {
  generateInternalKeys,
  type InternalKeys,
  inProcessFetch,
  type Logger,
  type RunningServer,
  ServiceClient,
  type ServiceInstance,
  serveFetch,
} from "@agentplane/service-kit";
import { createTelemetry, telemetrySettings, traceRequests } from "@agentplane/telemetry";
import {
  createTenancyService,
  oidcSignInGap,
  type TenancyService,
  tenancyConfigFromSettings,
} from "@agentplane/tenancy-svc";
import type { AllInOneEnv } from "./config.ts";
import { SANDBOXES_ENTRY } from "./data-dir.ts";
import { loadOrCreateSecretKey } from "./secrets.ts";

export interface Platform {
  url: string;
  publicUrl: string;
  server: RunningServer;
  /** Built by the gateway's own builder from its own settings, as the distributed gateway is. */
  gateway: BuiltGateway;
  /** The internal identity keys of this process (benchmarks and tests sign direct calls with them). */
  keys: Awaited<ReturnType<typeof generateInternalKeys>>;
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
  /** Model providers of the inference proxy; by default those of the launcher's settings. */
  inference?: InferenceConfig;
}

function inProcessTarget(instance: ServiceInstance): GatewayTarget {
  return {
    fetch: inProcessFetch(instance),
    ...(instance.handleUpgrade ? { upgrade: { kind: "in-process" as const, handle: instance.handleUpgrade } } : {}),
    ready: () => instance.ready(),
    ...(instance.readiness ? { readiness: () => instance.readiness!() } : {}),
  };
}

/**
 * Builds every service in this process on one database and bus and puts the gateway in front,
 * dispatching in process. Each service is built by its own builder from its own settings
 * (`configFromSettings` of its config module), as its deployable builds it in the distributed mode;
 * only the wiring differs: one database, one bus, generated keys and in-process clients.
 */
export async function assemblePlatform(options: AssembleOptions): Promise<Platform> {
  const { env, bus, logger } = options;
  const keys = await generateInternalKeys();
  // One deployable, one telemetry: the gateway's request span, and a span per service it calls.
  const telemetry = createTelemetry(telemetrySettings(env, "agentplane", API_VERSION), logger);
  const secretKey = loadOrCreateSecretKey(options.dataDir, env.AGENTPLANE_SECRET_KEY);
  // Listen first so the public URL (activation links) is known when PORT is 0; requests that
  // arrive before the services are built get a 503 problem.
  let handler: BuiltGateway["fetch"] | undefined;
  const server = await serveFetch(
    (req, nodeEnv) =>
      handler
        ? handler(req, nodeEnv)
        : problemResponse(
            new ProblemError("service-unavailable", { detail: "Starting", headers: { "retry-after": "1" } }),
          ),
    { port: env.PORT, hostname: env.HOST, keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS },
  );
  const publicUrl = env.PUBLIC_URL ?? `http://localhost:${server.port}`;

  // As runService does for one service: a start that fails part-way closes what it opened (the
  // services built so far and the port) before the error goes to the launcher.
  const built: ServiceInstance[] = [];
  let composed: Awaited<ReturnType<typeof buildServices>>;
  try {
    composed = await buildServices(options, { keys, secretKey, publicUrl }, (instance) => {
      built.push(instance);
      return instance;
    });
  } catch (err) {
    await Promise.allSettled(built.map((s) => s.close()));
    await server.close().catch(() => {});
    throw err;
  }
  const { tenancy, sandbox } = composed;
  const services: Partial<Record<ServiceName, ServiceInstance>> = composed;
  const ingressHost = env.SANDBOX_INGRESS_HOST;
  const ingress: IngressRouter | undefined = ingressHost
    ? {
        parse: (host) => parseIngressHost(host, ingressHost),
        fetch: (request, target) => sandbox.ingress(request, target),
        upgrade: (req, socket, head, target) => sandbox.ingressUpgrade(req, socket, head, target),
      }
    : undefined;

  const targets: Partial<Record<ServiceName, GatewayTarget>> = {};
  for (const [name, instance] of Object.entries(services) as [ServiceName, ServiceInstance][]) {
    targets[name] = inProcessTarget(instance);
  }

  const consoleDir = await ensureConsoleBuild((message) => logger.info(message));
  const gateway = buildGateway({
    config: gatewayConfigFromSettings(env),
    consoleDir,
    targets,
    keys,
    bus,
    logger,
    publicUrl,
    ...(ingress ? { ingress } : {}),
  });

  handler = traceRequests(telemetry, gateway.fetch);
  server.server.on("upgrade", gateway.handleUpgrade);

  return {
    url: server.url,
    publicUrl,
    server,
    gateway,
    keys,
    services,
    setupCode: tenancy.setupCode,
    async close() {
      await server.close();
      gateway.close();
      // The producers first, then audit, which consumes their events: what a service records while
      // it closes (the usage of calls that just ended, its outbox's last rows) still finds audit
      // subscribed to the in-process bus instead of a bus nobody reads any more.
      const { audit, ...producers } = services;
      await Promise.allSettled(Object.values(producers).map((s) => s.close()));
      await audit?.close();
      await telemetry.shutdown();
    },
  };
}

interface BuiltServices extends Record<string, ServiceInstance> {
  tenancy: TenancyService;
  sandbox: SandboxService;
}

/** Every service by its own builder from its own settings, in dependency order; `track` sees each one built. */
async function buildServices(
  options: AssembleOptions,
  shared: { keys: InternalKeys; secretKey: Uint8Array; publicUrl: string },
  track: <S extends ServiceInstance>(instance: S) => S,
): Promise<BuiltServices> {
  const { env, database, bus, logger } = options;
  const { keys, secretKey, publicUrl } = shared;
  const signInGap = oidcSignInGap(env);
  // Here OIDC_ISSUER also makes the gateway accept the issuer's JWTs, so it stands alone; say what is off.
  if (signInGap) logger.warn(signInGap);
  const tenancy = track(
    await createTenancyService({
      database,
      bus,
      keys,
      logger: logger.child({ service: "tenancy" }),
      config: tenancyConfigFromSettings(env, { secretKey, publicUrl }),
    }),
  );
  const auditConfig = auditConfigFromSettings(env);
  const audit = track(
    await createAuditService({
      database,
      bus,
      keys,
      logger: logger.child({ service: "audit" }),
      authorizer: tenancy.authorizer,
      config: auditConfig,
    }),
  );
  // Built before sandbox-svc so enforcement points can be handed its client; it reads sandboxes
  // (effective policy, drift) through sandbox-svc's internal API, resolved when first called.
  const governance: ServiceInstance = track(
    await createGovernanceService({
      database,
      bus,
      keys,
      logger: logger.child({ service: "governance" }),
      authorizer: tenancy.authorizer,
      tenancy: new ServiceClient("tenancy", inProcessFetch(tenancy), keys),
      sandboxes: new ServiceClient("sandbox", async (request) => sandbox.fetch(request), keys),
      config: governanceConfigFromSettings(env, { secretKey }),
    }),
  );
  const sandbox: SandboxService = track(
    await createSandboxService({
      database,
      bus,
      keys,
      logger: logger.child({ service: "sandbox" }),
      authorizer: tenancy.authorizer,
      governance: new ServiceClient("governance", inProcessFetch(governance), keys),
      config: sandboxConfigFromSettings(env, { dataDir: join(options.dataDir, SANDBOXES_ENTRY), apiUrl: publicUrl }),
    }),
  );
  const tenancyClient = new ServiceClient("tenancy", inProcessFetch(tenancy), keys);
  const connections = track(
    await createConnectionsService({
      database,
      bus,
      keys,
      logger: logger.child({ service: "connections" }),
      authorizer: tenancy.authorizer,
      signer: new TenancyProjectSigner(tenancyClient),
      governance: new ServiceClient("governance", inProcessFetch(governance), keys),
      // The MCP endpoints' platform tools call these with the caller's own identity.
      platformClients: {
        tenancy: tenancyClient,
        sandbox: new ServiceClient("sandbox", inProcessFetch(sandbox), keys),
        audit: new ServiceClient("audit", inProcessFetch(audit), keys),
      },
      config: connectionsConfigFromSettings(env),
    }),
  );
  const inference = track(
    await createInferenceService({
      database,
      bus,
      keys,
      logger: logger.child({ service: "inference" }),
      authorizer: tenancy.authorizer,
      tenancy: tenancyClient,
      audit: new ServiceClient("audit", inProcessFetch(audit), keys),
      governance: new ServiceClient("governance", inProcessFetch(governance), keys),
      config: options.inference ?? inferenceConfigFromSettings(env),
      // PRICE_TABLE_JSON prices the proxy's spend estimates as it prices audit's records (the
      // distributed proxy reads the same variable); parsed and checked once, by audit's config.
      pricing: new Pricing(auditConfig.priceOverrides),
    }),
  );
  return { tenancy, audit, governance, sandbox, connections, inference };
}
