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
import { createGovernanceService } from "./app.ts";
import { configFromEnv } from "./config.ts";

/** The distributed deployable: one governance-svc replica on Postgres and Redis. */
const { env, config } = configFromEnv(process.env);
const logger = createLogger("governance-svc", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({
  privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY,
  publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY,
});
const database = await openDatabase(env.DATABASE_URL);
const bus = createBus({ redisUrl: env.REDIS_URL });
const authorizer = new RemoteAuthorizer(new ServiceClient("tenancy", httpFetch(env.TENANCY_URL), keys), {
  callerService: "governance",
});
const service = await createGovernanceService({
  database,
  bus,
  keys,
  logger,
  authorizer,
  ...(env.SANDBOX_URL ? { sandboxes: new ServiceClient("sandbox", httpFetch(env.SANDBOX_URL), keys) } : {}),
  config,
});
const server = await serveFetch(service.fetch, { port: env.PORT, hostname: env.HOST });
logger.info({ url: server.url }, "governance-svc listening");
onShutdown(async () => {
  await server.close();
  await service.close();
  await bus.close();
  await database.close();
}, logger);
