import { ProblemError } from "@agentplane/problem-details";
import type { SandboxService } from "@agentplane/sandbox-svc";
import type { Platform } from "./assemble.ts";
import type { AllInOneEnv } from "./config.ts";
import type { LocalRuntime } from "./runtime.ts";

export interface WelcomeOptions {
  env: AllInOneEnv;
  dataDir: string;
  platform: Pick<Platform, "publicUrl" | "setupCode" | "services">;
  runtime?: LocalRuntime | undefined;
  /** Why the agent runtime did not start, when it was meant to. */
  runtimeError?: unknown;
  /** Whether the control plane holds a model provider credential. */
  hasModel?: boolean;
}

/** What an operator needs after `npm start`: where things are and how to get the first token. */
export function printWelcome(options: WelcomeOptions): void {
  process.stdout.write(`${welcomeLines(options).join("\n")}\n`);
}

/** The lines of the start banner. */
export function welcomeLines(options: WelcomeOptions): string[] {
  const { platform, dataDir, env } = options;
  const base = platform.publicUrl;
  const lines = [
    "",
    "  Agentplane control plane is running (all-in-one, embedded storage)",
    "",
    `  Console        ${base}/  (sign in with an API token)`,
    `  API            ${base}/v1`,
    `  API reference  ${base}/docs`,
    `  OpenAPI        ${base}/v1/openapi.json`,
    `  Health         ${base}/health`,
    `  Data           ${dataDir}`,
    ...(options.runtime ? [`  Agent runtime  ${options.runtime.url}  (webhooks: /agents/webhooks/<name>)`] : []),
    ...(options.runtime ? agentModelLines(options.runtime, options.hasModel === true) : []),
    ...(!options.runtime && options.runtimeError !== undefined ? runtimeFailureLines(options.runtimeError, env) : []),
    ...sandboxLines(platform.services.sandbox as Partial<SandboxService> | undefined),
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
  return lines;
}

/**
 * Whether sandboxes can start here, said at start rather than at the first sandbox: the local
 * driver needs bubblewrap (the driver's own check, so the banner and the 503 say the same), and
 * whether it can apply resource limits.
 */
function sandboxLines(sandbox: Partial<SandboxService> | undefined): string[] {
  try {
    sandbox?.driver?.checkAvailable();
    // A driver run by a user other than root rarely may write cgroups: limits are then accepted
    // and recorded but not applied, which a person should hear before relying on them.
    const unavailable = sandbox?.driver?.describe().cgroupsUnavailable;
    if (typeof unavailable !== "string") return [];
    return [
      `  Sandboxes      resource limits not enforced here (${unavailable}): the cgroups of`,
      "                 apps/sandbox-svc/README.md need root or a writable cgroup hierarchy",
    ];
  } catch (err) {
    const reason = err instanceof ProblemError ? (err.detail ?? err.message) : (err as Error).message;
    return [`  Sandboxes      cannot start yet: ${reason}`];
  }
}

/** The runtime that was meant to start and did not: why, and the variable that fixes it. */
function runtimeFailureLines(err: unknown, env: AllInOneEnv): string[] {
  const e = err as NodeJS.ErrnoException;
  const reason =
    e?.code === "EADDRINUSE"
      ? `port ${env.AGENT_RUNTIME_PORT} is already in use: set AGENT_RUNTIME_PORT to a free port`
      : (e?.message ?? String(err));
  return [
    `  Agent runtime  not started: ${reason}`,
    "                 (AGENT_RUNTIME=off starts the control plane without it)",
  ];
}

/** Whether the agent can reach a model, and if not the one thing to do about it. */
function agentModelLines(runtime: LocalRuntime, hasModel: boolean): string[] {
  if (!hasModel) {
    return [
      "  Agent model    none yet: set CLOUD_A_BEARER_TOKEN (or CLOUD_B_API_KEY with CLOUD_B_RESOURCE_NAME)",
      "                 in the control plane's environment and restart; the agent reaches it through the gateway",
    ];
  }
  if (!runtime.identity) {
    return ["  Agent model    through the gateway once the installation is activated (steps below)"];
  }
  return [`  Agent model    through the gateway, billed to project ${runtime.identity.projectId}`];
}
