// The distributed deployable: tenancy as its own process on Postgres (or PGlite) and Redis.
import { openDatabase } from "@agentplane/db";
import { createBus } from "@agentplane/events";
import {
  createLogger,
  importInternalKeys,
  installProcessGuard,
  onShutdown,
  parseEnv,
  serveFetch,
} from "@agentplane/service-kit";
import { z } from "zod";
import { createTenancyService } from "./app.ts";
import { configFromEnv, oidcSignInGap, TenancySettingsSchema } from "./config.ts";

const EnvSchema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8081),
    HOST: z.string().min(1).default("0.0.0.0"),
    DATABASE_URL: z.string().min(1),
    REDIS_URL: z.string().optional(),
    INTERNAL_IDENTITY_PUBLIC_KEY: z.string().optional(),
    INTERNAL_IDENTITY_PRIVATE_KEY: z.string().optional(),
    AGENTPLANE_SECRET_KEY: z
      .string()
      .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64-encoded"),
    LOG_LEVEL: z.string().default("info"),
    ...TenancySettingsSchema.shape,
  })
  // Alone, tenancy reads OIDC_ISSUER only for sign-in, so an issuer without a client is a mistake.
  .refine((env) => !oidcSignInGap(env), {
    message: "OIDC_CLIENT_ID is required when OIDC_ISSUER is set",
    path: ["OIDC_CLIENT_ID"],
  })
  .refine((env) => env.INTERNAL_IDENTITY_PUBLIC_KEY || env.INTERNAL_IDENTITY_PRIVATE_KEY, {
    message: "INTERNAL_IDENTITY_PUBLIC_KEY or INTERNAL_IDENTITY_PRIVATE_KEY is required",
    path: ["INTERNAL_IDENTITY_PUBLIC_KEY"],
  });

const env = parseEnv(EnvSchema);
const logger = createLogger("tenancy", env.LOG_LEVEL);
installProcessGuard(logger);
const keys = await importInternalKeys({
  privateJwk: env.INTERNAL_IDENTITY_PRIVATE_KEY,
  publicJwk: env.INTERNAL_IDENTITY_PUBLIC_KEY,
});
const database = await openDatabase(env.DATABASE_URL);
const bus = createBus({ redisUrl: env.REDIS_URL });
const service = await createTenancyService({
  database,
  bus,
  keys,
  logger,
  config: configFromEnv(env, { secretKey: Buffer.from(env.AGENTPLANE_SECRET_KEY, "base64") }),
});
if (service.setupCode) {
  // Written to the terminal, not the structured log: it is a one-time secret for the operator.
  process.stdout.write(
    `\nInstallation not activated. Setup code: ${service.setupCode}\n` +
      `Start an activation (POST /v1/installation/activation) and approve it at ${env.PUBLIC_URL ?? "<the gateway's address>"}/activate` +
      `${env.OIDC_ISSUER ? " (or by signing in there with your identity provider)" : ""}\n\n`,
  );
}
const server = await serveFetch(service.fetch, { port: env.PORT, hostname: env.HOST });
logger.info({ url: server.url }, "tenancy listening");
onShutdown(async () => {
  await server.close();
  await service.close();
  await bus.close();
  await database.close();
}, logger);
