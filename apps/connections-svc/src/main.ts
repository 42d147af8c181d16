import { openDatabase } from "@agentplane/db";
import { createBus } from "@agentplane/events";
import {
  createLogger,
  httpFetch,
  importInternalKeys,
  installProcessGuard,
  onShutdown,
  RemoteAuthorizer,
  ServiceClient,
  serveFetch,
} from "@agentplane/service-kit";
import { createConnectionsService } from "./app.ts";
import { configFromEnv } from "./config.ts";
import { TenancyProjectSigner } from "./services/project-signer.ts";

/** The distributed deployable: one connections-svc replica on Postgres and Redis. */
const { env, config } = configFromEnv(process.env);
const logger = createLogger("connections-svc", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({
  privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY,
  publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY,
});
const database = await openDatabase(env.DATABASE_URL);
const bus = createBus({ redisUrl: env.REDIS_URL });
const tenancy = new ServiceClient("tenancy", httpFetch(env.TENANCY_URL), keys);
const service = await createConnectionsService({
  database,
  bus,
  keys,
  logger,
  authorizer: new RemoteAuthorizer(tenancy, { callerService: "connections" }),
  signer: new TenancyProjectSigner(tenancy),
  ...(env.GOVERNANCE_URL ? { governance: new ServiceClient("governance", httpFetch(env.GOVERNANCE_URL), keys) } : {}),
  // The MCP endpoints' platform tools call these with the caller's own identity.
  platformClients: {
    tenancy,
    ...(env.SANDBOX_URL ? { sandbox: new ServiceClient("sandbox", httpFetch(env.SANDBOX_URL), keys) } : {}),
    ...(env.AUDIT_URL ? { audit: new ServiceClient("audit", httpFetch(env.AUDIT_URL), keys) } : {}),
  },
  config,
});
const server = await serveFetch(service.fetch, { port: env.PORT, hostname: env.HOST });
if (service.handleUpgrade) server.server.on("upgrade", service.handleUpgrade);
logger.info({ url: server.url, replica: config.replicaId }, "connections-svc listening");
onShutdown(async () => {
  await server.close();
  await service.close();
  await bus.close();
  await database.close();
}, logger);
