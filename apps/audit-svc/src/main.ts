import { openDatabase } from "@agentplane/db";
import { createBus } from "@agentplane/events";
import {
  createLogger,
  httpFetch,
  importInternalKeys,
  installProcessGuard,
  onShutdown,
  parseEnv,
  RemoteAuthorizer,
  ServiceClient,
  serveFetch,
} from "@agentplane/service-kit";
import { createAuditService } from "./app.ts";
import { AuditEnvSchema } from "./config.ts";
import { parsePriceOverrides } from "./services/pricing.ts";

/** The distributed deployable: one audit-svc replica on Postgres and Redis. */
const env = parseEnv(AuditEnvSchema);
const logger = createLogger("audit-svc", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({
  privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY,
  publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY,
});
const database = await openDatabase(env.DATABASE_URL);
const bus = createBus({ redisUrl: env.REDIS_URL });
const authorizer = new RemoteAuthorizer(new ServiceClient("tenancy", httpFetch(env.TENANCY_URL), keys), {
  callerService: "audit",
});
const service = await createAuditService({
  database,
  bus,
  keys,
  logger,
  authorizer,
  config: { retentionDays: env.AUDIT_RETENTION_DAYS, priceOverrides: parsePriceOverrides(env.PRICE_TABLE_JSON) },
});
const server = await serveFetch(service.fetch, { port: env.PORT, hostname: env.HOST });
logger.info({ url: server.url }, "audit-svc listening");
onShutdown(async () => {
  await server.close();
  await service.close();
  await bus.close();
  await database.close();
}, logger);
