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
    PUBLIC_URL: z.url().optional(),
    KEY_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).default(86_400),
    AGENTPLANE_BOOTSTRAP_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
    LOG_LEVEL: z.string().default("info"),
    // Activation approval by signing in at this identity provider (authorization code flow + PKCE).
    OIDC_ISSUER: z.url().optional(),
    OIDC_CLIENT_ID: z.string().min(1).optional(),
    OIDC_CLIENT_SECRET: z.string().min(1).optional(),
    OIDC_REDIRECT_URI: z.url().optional(),
  })
  .refine((env) => !env.OIDC_ISSUER || env.OIDC_CLIENT_ID, {
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
  config: {
    secretKey: Buffer.from(env.AGENTPLANE_SECRET_KEY, "base64"),
    publicUrl: env.PUBLIC_URL ?? "http://localhost:8080",
    publicUrlFromRequest: !env.PUBLIC_URL,
    keyRotationGraceSeconds: env.KEY_ROTATION_GRACE_SECONDS,
    ...(env.AGENTPLANE_BOOTSTRAP_TOKEN ? { bootstrapToken: env.AGENTPLANE_BOOTSTRAP_TOKEN } : {}),
    ...(env.OIDC_ISSUER && env.OIDC_CLIENT_ID
      ? {
          oidc: {
            issuer: env.OIDC_ISSUER,
            clientId: env.OIDC_CLIENT_ID,
            ...(env.OIDC_CLIENT_SECRET ? { clientSecret: env.OIDC_CLIENT_SECRET } : {}),
            ...(env.OIDC_REDIRECT_URI ? { redirectUri: env.OIDC_REDIRECT_URI } : {}),
          },
        }
      : {}),
  },
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
