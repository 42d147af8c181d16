import { Pricing, parsePriceOverrides } from "@agentplane/audit-svc";
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
import { createInferenceService } from "./app.ts";
import { configFromEnv, InferenceEnvSchema } from "./config.ts";

/** The distributed deployable: one inference-proxy replica; tenancy, audit (and governance) over HTTP. */
const env = parseEnv(InferenceEnvSchema);
const logger = createLogger("inference-proxy", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({
  privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY,
  publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY,
});
const database = await openDatabase(env.DATABASE_URL);
const bus = createBus({ redisUrl: env.REDIS_URL });
const tenancy = new ServiceClient("tenancy", httpFetch(env.TENANCY_URL), keys);
const service = await createInferenceService({
  database,
  bus,
  keys,
  logger,
  authorizer: new RemoteAuthorizer(tenancy, { callerService: "inference" }),
  tenancy,
  audit: new ServiceClient("audit", httpFetch(env.AUDIT_URL), keys),
  ...(env.GOVERNANCE_URL ? { governance: new ServiceClient("governance", httpFetch(env.GOVERNANCE_URL), keys) } : {}),
  config: configFromEnv(process.env),
  pricing: new Pricing(parsePriceOverrides(env.PRICE_TABLE_JSON)),
});
const server = await serveFetch(service.fetch, { port: env.PORT, hostname: env.HOST });
logger.info({ url: server.url, hasModel: service.hasModel }, "inference-proxy listening");
onShutdown(async () => {
  await server.close();
  await service.close();
  await bus.close();
  await database.close();
}, logger);
