// The distributed deployable: tenancy as its own process on Postgres (or PGlite) and Redis.
import { parseEnv, runService } from "@agentplane/service-kit";
import { createTenancyService } from "./app.ts";
import { configFromEnv, TenancyEnvSchema } from "./config.ts";

const env = parseEnv(TenancyEnvSchema);
const { service } = await runService({
  name: "tenancy",
  env,
  build: ({ database, bus, keys, logger }) =>
    createTenancyService({
      database,
      bus,
      keys,
      logger,
      config: configFromEnv(process.env, { secretKey: Buffer.from(env.AGENTPLANE_SECRET_KEY, "base64") }),
    }),
});
if (service.setupCode) {
  // Written to the terminal, not the structured log: it is a one-time secret for the operator.
  process.stdout.write(
    `\nInstallation not activated. Setup code: ${service.setupCode}\n` +
      `Start an activation (POST /v1/installation/activation) and approve it at ${env.PUBLIC_URL ?? "<the gateway's address>"}/activate` +
      `${env.OIDC_ISSUER ? " (or by signing in there with your identity provider)" : ""}\n\n`,
  );
}
