// The gateway as its own deployable (distributed mode): services are reached over HTTP keep-alive.
import { ensureConsoleBuild } from "@agentplane/console";
import { parseEnv, runService } from "@agentplane/service-kit";
import { buildGateway, httpTargets } from "./build.ts";
import { configFromEnv, GatewayEnvSchema, serviceUrls } from "./config.ts";

const env = parseEnv(GatewayEnvSchema);
const consoleDir = await ensureConsoleBuild((message) => process.stderr.write(`${message}\n`));
await runService({
  name: "api-gateway",
  env,
  build: ({ keys, bus, logger }) =>
    buildGateway({
      config: configFromEnv(process.env),
      targets: httpTargets(serviceUrls(env)),
      keys,
      bus,
      logger,
      consoleDir,
      ...(env.SANDBOX_URL ? { sandboxUrl: env.SANDBOX_URL } : {}),
      ...(env.AGENT_RUNTIME_URL && env.AGENT_RUNTIME_PROJECT_ID
        ? { agentRuntime: { url: env.AGENT_RUNTIME_URL.replace(/\/$/, ""), projectId: env.AGENT_RUNTIME_PROJECT_ID } }
        : {}),
    }),
  describe: () => ({ services: Object.keys(serviceUrls(env)) }),
});
