import type { Logger } from "pino";
import type { DeliveryDeps } from "./chat/deliver.ts";
import type { TeamChatAdapter } from "./chat/team-chat.ts";
import type { RuntimeConfig } from "./config.ts";
import type { ContextWindowCatalog } from "./context/catalog.ts";
import type { RuntimeDb } from "./db/database.ts";
import type { LiveHub } from "./live/hub.ts";
import type { MemoryStore } from "./memory/store.ts";
import type { ModelClient } from "./models/provider.ts";
import type { RuntimeSecrets } from "./observability/credentials.ts";
import type { LlmTracing } from "./observability/llm-tracing.ts";
import type { ProductTelemetry } from "./observability/product-events.ts";
import type { ScheduleRunner } from "./schedules/runner.ts";
import type { AgentActivity } from "./services/activity.ts";
import type { MessageWriter } from "./services/message-writer.ts";
import type { MessageRow } from "./services/threads.ts";
import type { TurnControl } from "./services/turn-control.ts";
import type { PluginReport } from "./tools/plugins.ts";
import type { SkillCatalog } from "./tools/skills.ts";
import type { ToolRegistry } from "./tools/types.ts";
import type { UsageRecorder } from "./usage/recorder.ts";
import type { VoiceAvailability } from "./voice/index.ts";
import type { DeliveryLog } from "./webhooks/deliveries.ts";
import type { WebhookRegistry } from "./webhooks/registry.ts";
import type { WebhookRunQueue } from "./webhooks/run-queue.ts";

/** Everything the HTTP app works with; built by createRuntime, passed in (no module state). */
export interface RuntimeDeps {
  config: RuntimeConfig;
  database: RuntimeDb;
  /** Group-committed message appends (turn steps and deliveries). */
  messages: MessageWriter;
  model: ModelClient;
  /** Every tool a turn offers the model (core, skills, plugins, memory, schedules). */
  tools: ToolRegistry;
  skills: SkillCatalog;
  /** Context windows of the model ids (bundled, refreshed from MODELS_DEV_URL at start). */
  catalog: ContextWindowCatalog;
  /** Live followers of threads (the SSE route). */
  live: LiveHub;
  /** Turns running per thread, so they can be stopped. */
  turns: TurnControl;
  /** Runs of the agent executing now: a heartbeat tick does not start while one is. */
  activity: AgentActivity;
  scheduler: ScheduleRunner;
  memory: MemoryStore;
  /** What happened to each plugin at start (loaded, failed, tools skipped). */
  plugins: PluginReport[];
  teamChat: TeamChatAdapter | null;
  logger: Logger;
  /** LLM tracing to Langfuse (off without TRACING_SECRET_KEY). */
  tracing: LlmTracing;
  /** Product telemetry events over OTLP (off without OTEL_EXPORTER_OTLP_ENDPOINT). */
  telemetry: ProductTelemetry;
  registry: WebhookRegistry;
  /** Values never traced, logged or posted: the credentials and the webhook secrets. */
  secrets: RuntimeSecrets;
  /** Delivery ids of the last 24 h, so a sender's retry does not run the agent twice. */
  deliveries: DeliveryLog;
  runs: WebhookRunQueue;
  /** The runtime's usage: model calls as they return, voice sessions as they go. */
  usage: UsageRecorder;
  /** Whether the voice meeting tools are offered, and why not. */
  voice: VoiceAvailability;
  /** Live listeners of the web chat: every message stored in a web thread outside a turn stream. */
  onWebMessage?: (message: MessageRow) => void;
}

export function deliveryDeps(deps: RuntimeDeps): DeliveryDeps {
  return {
    db: deps.database.db,
    messages: deps.messages,
    teamChat: deps.teamChat,
    logger: deps.logger,
    ...(deps.onWebMessage ? { onWebMessage: deps.onWebMessage } : {}),
    secrets: deps.secrets.values,
  };
}
