import { RuntimeEnvSchema } from "../src/config.ts";

/** The runtime's variables by topic, for the `.env` template (a test checks none is missing). */
export const ENV_SECTIONS: Array<{ title: string; note?: string; variables: string[] }> = [
  {
    title: "Model provider (set ONE credential for the provider you choose; everything else has a default)",
    note: "cloud-a: CLOUD_A_BEARER_TOKEN, or CLOUD_A_ACCESS_KEY_ID + CLOUD_A_SECRET_ACCESS_KEY. cloud-b: CLOUD_B_API_KEY with CLOUD_B_RESOURCE_NAME or CLOUD_B_BASE_URL. Through the platform instead: GATEWAY_API_URL (the gateway's address, e.g. http://localhost:8080, without /v1) + GATEWAY_API_TOKEN (a token restricted to one project) and no credential here.",
    variables: [
      "LLM_PROVIDER",
      "CLOUD_A_BEARER_TOKEN",
      "CLOUD_A_ACCESS_KEY_ID",
      "CLOUD_A_SECRET_ACCESS_KEY",
      "CLOUD_A_SESSION_TOKEN",
      "CLOUD_A_REGION",
      "CLOUD_B_API_KEY",
      "CLOUD_B_RESOURCE_NAME",
      "CLOUD_B_BASE_URL",
      "CLOUD_B_API_VERSION",
      "GATEWAY_API_URL",
      "GATEWAY_API_TOKEN",
      "CLOUD_A_ENDPOINT_URL",
      "CLOUD_A_ALT_BASE_URL",
    ],
  },
  {
    title: "Models",
    variables: [
      "CLOUD_A_MODEL_ID",
      "CLOUD_A_CLASSIFICATION_MODEL_ID",
      "CLOUD_A_EMBEDDING_MODEL_ID",
      "CLOUD_B_MODEL_ID",
      "CLOUD_B_CLASSIFICATION_MODEL_ID",
      "CLOUD_B_EMBEDDING_MODEL_ID",
      "CONTEXT_WINDOW_TOKENS",
      "MODELS_DEV_URL",
      "COMPACTION_THRESHOLD_PERCENT",
      "COMPACTION_TAIL_MESSAGES",
    ],
  },
  {
    title: "The runtime (PORT and HOST: keep HOST on loopback; the platform's gateway fronts it)",
    variables: [
      "PORT",
      "HOST",
      "AGENT_ALLOWED_HOSTS",
      "HTTP_KEEP_ALIVE_TIMEOUT_MS",
      "DATABASE_URL",
      "AGENT_ID",
      "AGENT_NAME",
      "TEAM_NAME",
      "OWNER_USER_ID",
      "AGENT_HOME",
      "AGENT_DATA_DIR",
      "AGENT_SECRET_KEY",
      "SHELL_WORKSPACE_ROOT",
      "SHELL_PASS_ENV",
      "SHELL_ISOLATION",
      "AGENT_SKILLS_DIR",
      "AGENT_PLUGINS_DIR",
      "HEARTBEAT_INTERVAL_MINUTES",
      "MEMORY_MAX_NOTES",
      "USAGE_RETENTION_DAYS",
      "LOG_LEVEL",
      "AGENT_HTTP_URL",
    ],
  },
  {
    title: "Sandbox shell (set by the platform inside a sandbox)",
    variables: ["AGENTPLANE_API_URL", "AGENTPLANE_TOKEN", "AGENTPLANE_PROJECT_ID", "AGENTPLANE_SANDBOX_ID"],
  },
  {
    title: "Team chat",
    variables: [
      "CHAT_BOT_TOKEN",
      "CHAT_APP_TOKEN",
      "CHAT_EXPECTED_APP_ID",
      "CHAT_API_URL",
      "CHAT_MODE",
      "CHAT_OWNER_ID",
      "CHAT_ALLOW_BOTS",
      "CHAT_BOT_TURNS_MAX",
      "CHAT_ALLOWED_CHANNELS",
    ],
  },
  {
    title: "Voice meetings",
    variables: [
      "VOICE_API_KEY",
      "VOICE_API_URL",
      "VOICE_BROWSER_PATH",
      "VOICE_BROWSER_SANDBOX",
      "VOICE_REALTIME_MODEL",
      "VOICE_REALTIME_VOICE",
      "VOICE_TRANSCRIPTION_MODEL",
      "MEETING_BOT_EMAIL",
      "MEETING_BOT_PASSWORD",
      "MEETING_TIMEOUT_MINUTES",
      "MEETING_ADMISSION_TIMEOUT_SECONDS",
    ],
  },
  {
    title: "Observability",
    variables: [
      "TRACING_SECRET_KEY",
      "TRACING_PUBLIC_KEY",
      "TRACING_BASE_URL",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_API_KEY",
      "DEPLOYMENT_ENVIRONMENT",
    ],
  },
];

/** A variable's default as the runtime parses an unset value, for the commented line. */
function defaultOf(name: string): string {
  const schema = (
    RuntimeEnvSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>
  )[name];
  const parsed = schema?.safeParse(undefined);
  return parsed?.success && parsed.data !== undefined ? String(parsed.data) : "";
}

/** Every runtime variable, commented out with its default: uncomment what you change. */
export function envTemplate(): string {
  const lines = [
    "# Agent runtime settings. Uncomment and set what you need; restart the runtime after editing.",
    "# Variables set in the process environment win over this file.",
    "",
  ];
  for (const section of ENV_SECTIONS) {
    lines.push(`# --- ${section.title}`);
    if (section.note) lines.push(`# ${section.note}`);
    for (const name of section.variables) lines.push(`# ${name}=${defaultOf(name)}`);
    lines.push("");
  }
  return lines.join("\n");
}
