import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { envBoolean } from "@agentplane/service-kit/config";
import pino from "pino";
import { z } from "zod";
import { type HostPattern, parseAllowedHosts } from "./http/allowed-hosts.ts";

export const PROVIDERS = ["cloud-a", "cloud-a-alt", "cloud-b"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The voice vendor's realtime WebSocket endpoint (GA). */
export const DEFAULT_VOICE_API_URL = "wss://api.openai.com/v1/realtime";

/** A managed-credential placeholder that a proxy rewrites on the way out (`__managed_cred:<uuid>__`). */
export const CREDENTIAL_PLACEHOLDER = /^__managed_cred:[0-9a-fA-F-]{36}__$/;

/** Memory notes kept at most when MEMORY_MAX_NOTES is unset. */
export const DEFAULT_MEMORY_MAX_NOTES = 10_000;

/** The fixed owner id of a local install (spec: "a fixed local sentinel UUID"). */
export const LOCAL_OWNER_USER_ID = "00000000-0000-4000-8000-000000000001";

const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
const withDefault = (value: string) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === "" ? value : v.trim()));
const positiveInt = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v) => {
      const n = Number(v);
      return v !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
    });
/** A whole number from `min` to `max`, `fallback` when unset; anything else stops the start with `message`. */
const wholeNumberIn = (fallback: number, min: number, max: number, message: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message });
        return z.NEVER;
      }
      return n;
    });
const port = wholeNumberIn(3003, 0, 65535, "must be a port number (0 picks a free port)");
/** HTTP_KEEP_ALIVE_TIMEOUT_MS: 1 s to 1 h, 65 s when unset (as the platform's services). */
const keepAliveTimeout = wholeNumberIn(
  65_000,
  1_000,
  3_600_000,
  "must be a whole number of milliseconds from 1000 to 3600000",
);
/** A whole number ≥ 0, `fallback` when unset; anything else stops the start with `message`. */
const wholeNumber = (fallback: number, message: string) =>
  wholeNumberIn(fallback, 0, Number.POSITIVE_INFINITY, message);
const percent = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v) => {
      const n = Number(v);
      return v !== undefined && v.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= 100 ? n : fallback;
    });

/**
 * Every runtime variable of the spec, with the spec's defaults. Values arrive as strings (env and
 * `.env`); blank counts as unset so that `FOO=` in a `.env` file does not override a default.
 */
export const RuntimeEnvSchema = z.object({
  // Provider selection and routing
  // An unknown provider is a start error naming the allowed ones, never a silent fall back to cloud-a.
  LLM_PROVIDER: withDefault("cloud-a").pipe(z.enum(PROVIDERS)),
  GATEWAY_API_URL: optional.pipe(z.url().optional()),
  GATEWAY_API_TOKEN: optional,
  // Credentials and integrations
  CLOUD_A_BEARER_TOKEN: optional,
  CLOUD_A_ACCESS_KEY_ID: optional,
  CLOUD_A_SECRET_ACCESS_KEY: optional,
  CLOUD_A_SESSION_TOKEN: optional,
  CLOUD_B_API_KEY: optional,
  CLOUD_B_RESOURCE_NAME: optional,
  CLOUD_B_BASE_URL: optional,
  CHAT_BOT_TOKEN: optional,
  CHAT_APP_TOKEN: optional,
  CHAT_EXPECTED_APP_ID: optional,
  // Team chat (our additions): the Web API's address, personal or team mode, the owner's chat user id
  CHAT_API_URL: withDefault("https://slack.com/api/").pipe(z.url()),
  CHAT_MODE: withDefault("personal").pipe(z.enum(["personal", "team"], { error: "must be personal or team" })),
  CHAT_ALLOW_BOTS: withDefault("false").pipe(envBoolean),
  // Channels team mode may link and answer in (comma-separated ids); unset: every internal channel
  CHAT_ALLOWED_CHANNELS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const ids = (v ?? "")
        .split(",")
        .map((id) => id.trim())
        .filter(Boolean);
      const bad = ids.find((id) => !/^[CG][A-Z0-9]{2,}$/.test(id));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: "must be comma-separated channel ids such as C0123ABCD" });
        return z.NEVER;
      }
      return ids;
    }),
  // Turns other bots' messages may run in one conversation without a person's message between them
  CHAT_BOT_TURNS_MAX: wholeNumber(3, "must be a whole number of turns (0: bots never run turns)"),
  CHAT_OWNER_ID: optional.pipe(
    z
      .string()
      .regex(/^[UW][A-Z0-9]{2,}$/, "must be a chat user id such as U0123ABCD")
      .optional(),
  ),
  // Endpoint overrides (our addition; production leaves them unset)
  CLOUD_A_ENDPOINT_URL: optional.pipe(z.url().optional()),
  CLOUD_A_ALT_BASE_URL: optional.pipe(z.url().optional()),
  // Core
  PORT: port,
  // Loopback for native starts; the container image sets HOST=0.0.0.0 (infra/Dockerfile).
  HOST: withDefault("127.0.0.1"),
  // Idle keep-alive connections are held longer than a load balancer's (ingress-nginx, AWS: 60 s)
  HTTP_KEEP_ALIVE_TIMEOUT_MS: keepAliveTimeout,
  // Host names the API answers to besides the loopback ones and AGENT_HTTP_URL's (parsed in loadConfig)
  AGENT_ALLOWED_HOSTS: optional,
  DATABASE_URL: optional,
  AGENT_ID: optional.pipe(z.uuid().optional()),
  AGENT_NAME: withDefault("Prism"),
  TEAM_NAME: withDefault("Local"),
  OWNER_USER_ID: withDefault(LOCAL_OWNER_USER_ID),
  SHELL_WORKSPACE_ROOT: optional,
  // Our addition: comma-separated variables local shell commands get besides PATH, HOME, LANG and such
  SHELL_PASS_ENV: optional,
  // Our addition: local commands under bubblewrap, hiding the runtime's own secret files
  SHELL_ISOLATION: withDefault("auto").pipe(
    z.enum(["auto", "bubblewrap", "off"], { error: "must be auto, bubblewrap or off" }),
  ),
  AGENT_DATA_DIR: optional,
  AGENT_SKILLS_DIR: optional,
  AGENT_PLUGINS_DIR: optional,
  // Sandbox shell (our addition): set by the control plane in a sandbox's environment
  AGENTPLANE_API_URL: optional.pipe(z.url().optional()),
  AGENTPLANE_TOKEN: optional,
  AGENTPLANE_PROJECT_ID: optional,
  AGENTPLANE_SANDBOX_ID: optional,
  // Heartbeat (our addition): minutes between heartbeat runs; 0 disables
  HEARTBEAT_INTERVAL_MINUTES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return 30;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) {
        ctx.addIssue({ code: "custom", message: "must be a number of minutes (0 disables heartbeat runs)" });
        return z.NEVER;
      }
      return n;
    }),
  // Memory (our addition): notes the agent keeps at most; remembering past it is refused
  MEMORY_MAX_NOTES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return DEFAULT_MEMORY_MAX_NOTES;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 1_000_000) {
        ctx.addIssue({ code: "custom", message: "must be a whole number of notes from 1 to 1000000" });
        return z.NEVER;
      }
      return n;
    }),
  // Usage (our addition): days the usage records are kept; 0 keeps them all
  USAGE_RETENTION_DAYS: wholeNumber(400, "must be a whole number of days (0 keeps every usage record)"),
  // Models
  CLOUD_A_MODEL_ID: withDefault("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
  CLOUD_A_CLASSIFICATION_MODEL_ID: withDefault("us.anthropic.claude-haiku-4-5-20251001-v1:0"),
  CLOUD_A_EMBEDDING_MODEL_ID: withDefault("amazon.titan-embed-text-v2:0"),
  CLOUD_A_REGION: withDefault("us-east-1"),
  CLOUD_B_MODEL_ID: withDefault("claude-sonnet-4-6"),
  CLOUD_B_CLASSIFICATION_MODEL_ID: withDefault("claude-haiku-4-5"),
  // '' is meaningful here (skip embeddings), so blank is kept rather than defaulted.
  CLOUD_B_EMBEDDING_MODEL_ID: z.string().optional().default("text-embedding-3-small"),
  CLOUD_B_API_VERSION: optional,
  CONTEXT_WINDOW_TOKENS: z
    .string()
    .optional()
    .transform((v) => {
      const n = Number(v);
      return v !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
    }),
  MODELS_DEV_URL: optional,
  // Compaction
  COMPACTION_THRESHOLD_PERCENT: percent(90),
  COMPACTION_TAIL_MESSAGES: positiveInt(6),
  // Voice meetings
  VOICE_API_KEY: optional,
  VOICE_REALTIME_MODEL: optional,
  VOICE_REALTIME_VOICE: optional,
  VOICE_TRANSCRIPTION_MODEL: optional,
  // Our additions: the realtime API's WebSocket address and the browser the meeting bot drives
  VOICE_API_URL: withDefault(DEFAULT_VOICE_API_URL).pipe(
    z.url({ protocol: /^wss?$/, error: "must be a ws:// or wss:// URL" }),
  ),
  VOICE_BROWSER_PATH: withDefault("/usr/bin/chromium"),
  // Our addition: Chromium's own sandbox for the meeting browser (voice/availability.ts)
  VOICE_BROWSER_SANDBOX: withDefault("auto").pipe(z.enum(["auto", "on", "off"], { error: "must be auto, on or off" })),
  MEETING_BOT_EMAIL: optional,
  MEETING_BOT_PASSWORD: optional,
  MEETING_TIMEOUT_MINUTES: positiveInt(60),
  MEETING_ADMISSION_TIMEOUT_SECONDS: positiveInt(300),
  // Observability
  TRACING_SECRET_KEY: optional,
  TRACING_PUBLIC_KEY: optional,
  TRACING_BASE_URL: withDefault("http://localhost:3100").pipe(z.url()),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional.pipe(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_EXPORTER_OTLP_API_KEY: optional,
  DEPLOYMENT_ENVIRONMENT: z.enum(["production", "staging", "development"]).optional(),
  // pino's level names and `silent`.
  LOG_LEVEL: withDefault("info").pipe(z.enum([...Object.keys(pino.levels.values), "silent"])),
  // Our addition: the AES-256-GCM key of secrets at rest (32 bytes, base64); else <data dir>/secret.key
  AGENT_SECRET_KEY: optional,
  // Installer
  AGENT_HOME: optional,
  AGENT_HTTP_URL: withDefault("http://localhost:3003"),
});

export type RuntimeEnv = z.infer<typeof RuntimeEnvSchema>;

export interface RuntimeConfig {
  env: RuntimeEnv;
  provider: Provider;
  agentHome: string;
  dataDir: string;
  databasePath: string;
  /** SHELL_PASS_ENV, parsed: variable names local shell commands inherit beyond the harmless ones. */
  shellPassEnv: string[];
  /** SHELL_WORKSPACE_ROOT, default `<AGENT_HOME>/workspace` (inside a sandbox: `/home/node`). */
  workspaceRoot: string;
  skillsDir: string;
  pluginsDir: string;
  /** Set when the shell tools run in a sandbox through the control plane's `/v1/shell/exec`. */
  sandbox: { apiUrl: string; token: string; projectId: string; sandboxId: string } | undefined;
  port: number;
  host: string;
  /** HTTP_KEEP_ALIVE_TIMEOUT_MS: how long an idle keep-alive connection is held. */
  keepAliveTimeoutMs: number;
  /** AGENT_ALLOWED_HOSTS, parsed; undefined when unset (`any` for `*`). */
  allowedHosts: HostPattern[] | "any" | undefined;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
    this.variable = variable;
  }
}

const REGIONAL_PREFIX = /^(us|eu|apac|ap|global|jp|au|ca|us-gov)\./;
const VERSION_SUFFIX = /(-v\d+(:\d+)?|:\d+)$/;

/** Why a `cloud-a-alt` model id is not bare, or undefined when it is. */
export function nonBareReason(modelId: string): string | undefined {
  if (REGIONAL_PREFIX.test(modelId)) return "has a regional inference-profile prefix";
  if (VERSION_SUFFIX.test(modelId)) return "has a version suffix";
  return undefined;
}

/** The gateway's address: the runtime adds `/v1/llm/...` itself, so a `/v1` in it would double. */
function checkGateway(env: RuntimeEnv): void {
  if (env.GATEWAY_API_URL === undefined) return;
  const url = new URL(env.GATEWAY_API_URL);
  if (!/\/v1(\/|$)/.test(url.pathname)) return;
  throw new ConfigError(
    "GATEWAY_API_URL",
    `is the gateway's address without /v1 (the runtime adds /v1/llm/...), e.g. ${url.origin}`,
  );
}

function checkCredentials(env: RuntimeEnv, provider: Provider): void {
  if (env.GATEWAY_API_URL) return;
  if (provider === "cloud-a") {
    if (env.CLOUD_A_BEARER_TOKEN) return;
    if (env.CLOUD_A_ACCESS_KEY_ID && !env.CLOUD_A_SECRET_ACCESS_KEY) {
      throw new ConfigError("CLOUD_A_SECRET_ACCESS_KEY", "is required with CLOUD_A_ACCESS_KEY_ID");
    }
    if (!env.CLOUD_A_ACCESS_KEY_ID) {
      throw new ConfigError(
        "CLOUD_A_BEARER_TOKEN",
        "is required for LLM_PROVIDER=cloud-a (or CLOUD_A_ACCESS_KEY_ID with CLOUD_A_SECRET_ACCESS_KEY, or GATEWAY_API_URL)",
      );
    }
    return;
  }
  if (provider === "cloud-a-alt") {
    if (!env.CLOUD_A_BEARER_TOKEN) {
      throw new ConfigError("CLOUD_A_BEARER_TOKEN", "is required for LLM_PROVIDER=cloud-a-alt (or GATEWAY_API_URL)");
    }
    return;
  }
  if (!env.CLOUD_B_API_KEY) {
    throw new ConfigError("CLOUD_B_API_KEY", "is required for LLM_PROVIDER=cloud-b (or GATEWAY_API_URL)");
  }
  if (!env.CLOUD_B_RESOURCE_NAME && !env.CLOUD_B_BASE_URL) {
    throw new ConfigError("CLOUD_B_RESOURCE_NAME", "is required for LLM_PROVIDER=cloud-b (or CLOUD_B_BASE_URL)");
  }
}

function checkModels(env: RuntimeEnv, provider: Provider): void {
  if (env.CLOUD_B_BASE_URL !== undefined && !/\/anthropic\/v1\/?$/.test(env.CLOUD_B_BASE_URL)) {
    throw new ConfigError("CLOUD_B_BASE_URL", "must end at /anthropic/v1");
  }
  if (provider !== "cloud-a-alt") return;
  for (const variable of ["CLOUD_A_MODEL_ID", "CLOUD_A_CLASSIFICATION_MODEL_ID"] as const) {
    const reason = nonBareReason(env[variable]);
    if (reason) {
      throw new ConfigError(variable, `"${env[variable]}" ${reason}; cloud-a-alt takes bare model ids`);
    }
  }
}

/** A 32-byte AES-256 key from base64, or undefined when it is not one. */
export function parseSecretKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed, "base64");
  return key.length === 32 ? key : undefined;
}

/** Parses and checks the environment; throws a ConfigError naming the variable at fault. */
export function loadConfig(source: Record<string, string | undefined>): RuntimeConfig {
  const parsed = RuntimeEnvSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? "environment"), issue?.message ?? "is invalid");
  }
  const env = parsed.data;
  const provider = env.LLM_PROVIDER;
  checkGateway(env);
  checkCredentials(env, provider);
  checkModels(env, provider);
  if (env.CHAT_BOT_TOKEN && !env.CHAT_APP_TOKEN) {
    throw new ConfigError("CHAT_APP_TOKEN", "is required with CHAT_BOT_TOKEN (the app-level token for socket mode)");
  }
  if (env.MEETING_BOT_PASSWORD && CREDENTIAL_PLACEHOLDER.test(env.MEETING_BOT_PASSWORD)) {
    // Placeholders are rewritten in outgoing API requests; this password is typed into a sign-in form.
    throw new ConfigError(
      "MEETING_BOT_PASSWORD",
      "is a credential placeholder; it must be the real password, because it is typed into the meeting service's sign-in form",
    );
  }
  if (env.AGENT_SECRET_KEY !== undefined && !parseSecretKey(env.AGENT_SECRET_KEY)) {
    throw new ConfigError("AGENT_SECRET_KEY", "must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)");
  }
  const agentHome = env.AGENT_HOME ?? join(homedir(), ".agent");
  const dataDir = env.AGENT_DATA_DIR ?? agentHome;
  const sandbox = sandboxOf(env);
  return {
    env,
    provider,
    agentHome,
    dataDir,
    databasePath: databasePathOf(env.DATABASE_URL, dataDir),
    shellPassEnv: shellPassEnvOf(env.SHELL_PASS_ENV),
    workspaceRoot: env.SHELL_WORKSPACE_ROOT ?? (sandbox ? "/home/node" : join(agentHome, "workspace")),
    skillsDir: env.AGENT_SKILLS_DIR ?? join(dataDir, "skills"),
    pluginsDir: env.AGENT_PLUGINS_DIR ?? join(dataDir, "plugins"),
    sandbox,
    port: env.PORT,
    host: env.HOST,
    keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    allowedHosts: allowedHostsOf(env.AGENT_ALLOWED_HOSTS),
  };
}

/**
 * Settings that are allowed but probably wrong: logged as warnings at start, never fatal.
 * GATEWAY_API_URL without GATEWAY_API_TOKEN is one: the all-in-one launcher may start the
 * runtime before a project token exists, but every model call will then be refused (401).
 */
export function configWarnings(
  config: RuntimeConfig,
  options: { gatewayTokenPending?: boolean } = {},
): Array<{ variable: string; message: string }> {
  const warnings: Array<{ variable: string; message: string }> = [];
  // A launcher that provisions the token itself (and restarts the runtime with it) says so.
  if (config.env.GATEWAY_API_URL && !config.env.GATEWAY_API_TOKEN && !options.gatewayTokenPending) {
    warnings.push({
      variable: "GATEWAY_API_TOKEN",
      message:
        "is not set while GATEWAY_API_URL is: model calls go to the gateway without a bearer token and will be refused until it is set (then restart)",
    });
  }
  return warnings;
}

function shellPassEnvOf(value: string | undefined): string[] {
  if (value === undefined) return [];
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  const bad = names.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (bad !== undefined) throw new ConfigError("SHELL_PASS_ENV", `"${bad}" is not a variable name`);
  return names;
}

function allowedHostsOf(value: string | undefined): RuntimeConfig["allowedHosts"] {
  if (value === undefined) return undefined;
  try {
    return parseAllowedHosts(value);
  } catch (err) {
    throw new ConfigError("AGENT_ALLOWED_HOSTS", (err as Error).message);
  }
}

/** Sandbox mode needs the API URL and token (as sandboxes receive them) plus which sandbox it is. */
function sandboxOf(env: RuntimeEnv): RuntimeConfig["sandbox"] {
  if (!env.AGENTPLANE_API_URL || !env.AGENTPLANE_TOKEN) return undefined;
  for (const variable of ["AGENTPLANE_PROJECT_ID", "AGENTPLANE_SANDBOX_ID"] as const) {
    if (!env[variable]) {
      throw new ConfigError(
        variable,
        "is required with AGENTPLANE_API_URL and AGENTPLANE_TOKEN (shell tools in a sandbox)",
      );
    }
  }
  return {
    apiUrl: env.AGENTPLANE_API_URL,
    token: env.AGENTPLANE_TOKEN,
    projectId: env.AGENTPLANE_PROJECT_ID as string,
    sandboxId: env.AGENTPLANE_SANDBOX_ID as string,
  };
}

function databasePathOf(url: string | undefined, dataDir: string): string {
  if (url === undefined) return join(dataDir, "agent.db");
  if (!url.startsWith("file:")) throw new ConfigError("DATABASE_URL", "must be a SQLite URL of the form file:<path>");
  const path = url.slice("file:".length).replace(/^\/\/(?=\/)/, "");
  if (path === "") throw new ConfigError("DATABASE_URL", "names no file");
  return path;
}

/**
 * The environment a native install runs with: `<AGENT_HOME>/.env` under the process environment
 * (a variable set in the process wins, as container `-e` options do).
 */
export function readEnvironment(processEnv: Record<string, string | undefined>): Record<string, string | undefined> {
  const home = processEnv.AGENT_HOME?.trim() || join(homedir(), ".agent");
  const file = join(home, ".env");
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, "utf8")) : {};
  return { ...fromFile, ...processEnv };
}
