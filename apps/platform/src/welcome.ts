import type { Platform } from "./assemble.ts";
import type { AllInOneEnv } from "./config.ts";

/** What an operator needs after `npm start`: where things are and how to get the first token. */
export function printWelcome(options: {
  env: AllInOneEnv;
  dataDir: string;
  platform: Platform;
  runtimeUrl?: string | undefined;
}): void {
  const { platform, dataDir, env } = options;
  const base = platform.publicUrl;
  const lines = [
    "",
    "  Agentplane control plane is running (all-in-one, embedded storage)",
    "",
    `  API            ${base}/v1`,
    `  API reference  ${base}/docs`,
    `  OpenAPI        ${base}/v1/openapi.json`,
    `  Health         ${base}/health`,
    `  Data           ${dataDir}`,
    ...(options.runtimeUrl ? [`  Agent runtime  ${options.runtimeUrl}  (webhooks: /agents/webhooks/<name>)`] : []),
    "",
  ];
  if (platform.setupCode) {
    lines.push(
      "  This installation is not activated yet. To get the first owner token:",
      `    1. curl -s -X POST ${base}/v1/installation/activation`,
      "       (note the sessionId and the userCode)",
      `    2. open ${base}/activate, enter the user code and this setup code:`,
      "",
      `         setup code: ${platform.setupCode}`,
      "",
      `    3. curl -s ${base}/v1/installation/activation/<sessionId>`,
      "       answers once with the owner API token (apl_...). Keep it: it is shown once.",
      "",
    );
  } else if (env.AGENTPLANE_BOOTSTRAP_TOKEN) {
    lines.push("  Activated with AGENTPLANE_BOOTSTRAP_TOKEN: use that token as the owner's API token.", "");
  } else {
    lines.push("  The installation is activated. Use an API token: Authorization: Bearer apl_...", "");
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
