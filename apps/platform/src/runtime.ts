import { join } from "node:path";
import { startRuntime } from "@agentplane/agent-runtime";
import type { Logger } from "@agentplane/service-kit";
import type { AllInOneEnv } from "./config.ts";

const PROVIDER_CREDENTIALS = ["CLOUD_A_BEARER_TOKEN", "CLOUD_A_ACCESS_KEY_ID", "CLOUD_B_API_KEY", "GATEWAY_API_URL"];

/**
 * The agent runtime next to the control plane (`npm start`). Without a provider credential in the
 * environment it runs in gateway mode against this control plane, so no model key is needed locally.
 */
export async function startLocalRuntime(options: {
  env: AllInOneEnv;
  rawEnv: Record<string, string | undefined>;
  dataDir: string;
  publicUrl: string;
  logger: Logger;
}): Promise<{ url: string; close(): Promise<void> }> {
  const { env, rawEnv, dataDir, publicUrl } = options;
  const home = rawEnv.AGENT_HOME ?? join(dataDir, "agent");
  const direct = PROVIDER_CREDENTIALS.some((name) => rawEnv[name]);
  const runtimeEnv: Record<string, string | undefined> = {
    ...rawEnv,
    PORT: String(env.AGENT_RUNTIME_PORT),
    HOST: env.AGENT_RUNTIME_HOST,
    AGENT_HOME: home,
    AGENT_DATA_DIR: rawEnv.AGENT_DATA_DIR ?? home,
    DATABASE_URL: rawEnv.AGENT_DATABASE_URL ?? `file:${join(home, "agent.db")}`,
    ...(direct
      ? {}
      : {
          GATEWAY_API_URL: publicUrl,
          GATEWAY_API_TOKEN: rawEnv.GATEWAY_API_TOKEN ?? rawEnv.AGENTPLANE_BOOTSTRAP_TOKEN,
        }),
  };
  const runtime = await startRuntime(runtimeEnv);
  options.logger.debug({ url: runtime.url, gatewayMode: !direct }, "agent runtime started");
  return { url: runtime.url, close: () => runtime.close() };
}
