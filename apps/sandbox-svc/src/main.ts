// sandbox-svc as its own deployable (distributed mode).
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
import { z } from "zod";
import { createSandboxService } from "./app.ts";
import { SandboxEgressHostMapSchema, SandboxImagesJsonSchema } from "./config.ts";

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8082),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z.string().min(1),
  REDIS_URL: z.string().optional(),
  INTERNAL_IDENTITY_PUBLIC_KEY: z.string().optional(),
  INTERNAL_IDENTITY_PRIVATE_KEY: z.string().optional(),
  TENANCY_URL: z.url(),
  /** governance-svc: admission, exec and egress decisions (without it nothing is enforced and sandboxes have no egress). */
  GOVERNANCE_URL: z.url().optional(),
  SANDBOX_EGRESS_HOST_MAP: SandboxEgressHostMapSchema.optional(),
  SANDBOX_DATA_DIR: z.string().default("./.agentplane/sandboxes"),
  SANDBOX_INGRESS_HOST: z.string().optional(),
  AGENTPLANE_API_URL: z.url().optional(),
  SANDBOX_LOCAL_ISOLATION: z.enum(["bwrap", "none"]).default("bwrap"),
  SANDBOX_IMAGES_JSON: SandboxImagesJsonSchema.optional(),
  LOG_LEVEL: z.string().default("info"),
});

const env = parseEnv(EnvSchema);
const logger = createLogger("sandbox-svc", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({
  privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY,
  publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY,
});
const database = await openDatabase(env.DATABASE_URL);
const bus = createBus({ redisUrl: env.REDIS_URL });
const tenancy = new ServiceClient("tenancy", httpFetch(env.TENANCY_URL), keys);
const governance = env.GOVERNANCE_URL
  ? new ServiceClient("governance", httpFetch(env.GOVERNANCE_URL), keys)
  : undefined;
if (!governance) logger.warn("GOVERNANCE_URL is not set: no policy enforcement, and sandboxes get no egress");
const service = await createSandboxService({
  database,
  bus,
  keys,
  logger,
  authorizer: new RemoteAuthorizer(tenancy, { callerService: "sandbox" }),
  ...(governance ? { governance } : {}),
  config: {
    dataDir: env.SANDBOX_DATA_DIR,
    isolation: env.SANDBOX_LOCAL_ISOLATION,
    ...(env.SANDBOX_IMAGES_JSON ? { images: env.SANDBOX_IMAGES_JSON } : {}),
    ...(env.SANDBOX_INGRESS_HOST ? { ingressHost: env.SANDBOX_INGRESS_HOST } : {}),
    ...(env.AGENTPLANE_API_URL ? { apiUrl: env.AGENTPLANE_API_URL } : {}),
    ...(env.SANDBOX_EGRESS_HOST_MAP ? { egressHostMap: env.SANDBOX_EGRESS_HOST_MAP } : {}),
  },
});
const server = await serveFetch(service.fetch, { port: env.PORT, hostname: env.HOST });
server.server.on("upgrade", service.handleUpgrade);
logger.info({ url: server.url }, "sandbox-svc listening");
onShutdown(async () => {
  await server.close();
  await service.close();
  await bus.close();
  await database.close();
}, logger);
