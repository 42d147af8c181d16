import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTelemetry, type Telemetry } from "@agentplane/telemetry";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import { createRuntimeApp } from "./app.ts";
import type { SlackTeamChat, SlackTeamChatOptions } from "./chat/slack/adapter.ts";
import type { TeamChatAdapter } from "./chat/team-chat.ts";
import { ConfigError, configWarnings, loadConfig, type RuntimeConfig, readEnvironment } from "./config.ts";
import { ContextWindowCatalog } from "./context/catalog.ts";
import { openDatabase } from "./db/database.ts";
import { prepareDataDir } from "./db/file-modes.ts";
import type { RuntimeDeps } from "./deps.ts";
import { Heartbeat } from "./heartbeat/heartbeat.ts";
import { hostPolicyOf } from "./http/host-guard.ts";
import { createRuntimeServer } from "./http/server.ts";
import { LiveHub } from "./live/hub.ts";
import { runtimeLogger } from "./logger.ts";
import { createEmbedder, type Embedder, embeddingEnvironmentConflicts } from "./memory/embeddings.ts";
import { memoryTool } from "./memory/memory-tool.ts";
import { MemoryStore } from "./memory/store.ts";
import { chatEnvironmentConflicts, type ModelClient, type ModelClientOptions } from "./models/provider.ts";
import { redactModelErrors } from "./models/redacted-errors.ts";
import { WorkerModelClient } from "./models/worker-client.ts";
import { RuntimeSecrets } from "./observability/credentials.ts";
import type { LlmTracing } from "./observability/llm-tracing.ts";
import { productTelemetry } from "./observability/product-events.ts";
import { DISABLED_TRACING } from "./observability/tracing-off.ts";
import { scheduleTool } from "./schedules/schedule-tool.ts";
import { type Clock, Scheduler } from "./schedules/scheduler.ts";
import { loadSecretKey, SecretBox, sealStoredSecrets } from "./secrets/secret-box.ts";
import { AgentActivity } from "./services/activity.ts";
import { ensureAgent } from "./services/agent.ts";
import { MessageWriter } from "./services/message-writer.ts";
import { TurnControl } from "./services/turn-control.ts";
import { coreTools, loadPlugins } from "./tools/index.ts";
import { commandEnvironment } from "./tools/shell-backend.ts";
import { UsageRecorder } from "./usage/recorder.ts";
import { UsageStore } from "./usage/store.ts";
import { setupVoice, type VoiceOptions } from "./voice/index.ts";
import { ensureWebAssets } from "./web/build.ts";
import { DeliveryLog } from "./webhooks/deliveries.ts";
import { executeWebhookRun, notifyWebhookFailure } from "./webhooks/execute-run.ts";
import { WebhookRegistry } from "./webhooks/registry.ts";
import { WebhookRunQueue } from "./webhooks/run-queue.ts";

/** The runtime's version, as telemetry reports it. */
export const RUNTIME_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export interface RuntimeOptions {
  logger?: Logger;
  /** Replaces the team-chat integration (default: the Slack adapter when CHAT_BOT_TOKEN is set). */
  teamChat?: TeamChatAdapter | null;
  /** Timeouts and retry intervals of the Slack adapter (tests shorten them). */
  slack?: SlackTeamChatOptions;
  /** Replaces the provider client built from the configuration. */
  model?: ModelClient;
  modelOptions?: ModelClientOptions;
  /** The scheduler's time source (tests move it instead of sleeping). */
  clock?: Clock;
  /** false: schedules run only when `scheduler.tick()` is called (tests). */
  scheduleTimer?: boolean;
  /** Replaces the provider's embedder (null: embeddings off). */
  embedder?: Embedder | null;
  /** false: vector search scans in process instead of loading sqlite-vec. */
  vectorExtension?: boolean;
  /**
   * The launcher wires GATEWAY_API_TOKEN itself once it exists (the all-in-one after activation)
   * and restarts the runtime with it: its absence until then is not worth a warning.
   */
  gatewayTokenPending?: boolean;
  /** Meeting hosts and controller of the voice tools (tests point them at the stand-ins). */
  voice?: VoiceOptions;
  /**
   * Files and folders of the launcher's own that local commands and file tools may not see (the
   * all-in-one's data dir: its database and secret key); the runtime's folders inside stay seen.
   */
  hiddenPaths?: readonly string[];
}

export interface Runtime {
  app: OpenAPIHono;
  deps: RuntimeDeps;
  agentId: string;
  heartbeat: Heartbeat;
  /** Listens on `port` (config.port by default; 0 picks a free one) and returns the address. */
  listen(port?: number, host?: string): Promise<{ port: number; url: string }>;
  close(): Promise<void>;
}

/**
 * Builds the runtime: opens and migrates the database, creates the agent on first boot, loads
 * the webhook registry and resumes the durable run queue. Does not listen until `listen()`.
 */
export async function createRuntime(config: RuntimeConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  // The credentials, and below the webhook secrets: never in a trace, a log line or a post. The
  // variables local commands inherit (SHELL_PASS_ENV) count too: a command can print them.
  const secrets = new RuntimeSecrets({
    ...commandEnvironment(process.env, config.workspaceRoot, config.shellPassEnv),
    ...config.env,
  });
  const logger = options.logger ?? runtimeLogger(config.env.LOG_LEVEL, undefined, secrets.values);
  const warnings = configWarnings(config, { gatewayTokenPending: options.gatewayTokenPending === true });
  for (const { variable, message } of warnings) logger.warn({ variable }, `${variable} ${message}`);
  prepareDataDir(config.dataDir);
  const database = await openDatabase(config.databasePath);
  const agent = await ensureAgent(database.db, config);
  let registry: WebhookRegistry;
  try {
    const box = new SecretBox(loadSecretKey(config));
    await sealStoredSecrets(database.db, box);
    registry = new WebhookRegistry(database.db, box);
    await registry.load();
    secrets.add(() => registry.secrets());
  } catch (err) {
    await database.close();
    throw err;
  }

  // OTLP export of product telemetry (off without an endpoint) and LLM tracing to Langfuse (off
  // without a secret key): neither ever changes what a run does.
  const otlp: Telemetry = createTelemetry(
    {
      endpoint: config.env.OTEL_EXPORTER_OTLP_ENDPOINT,
      apiKey: config.env.OTEL_EXPORTER_OTLP_API_KEY,
      environment: config.env.DEPLOYMENT_ENVIRONMENT ?? "production",
      serviceName: "agent-runtime",
      serviceVersion: RUNTIME_VERSION,
    },
    logger,
  );
  const telemetry = productTelemetry(otlp);
  // Langfuse's SDK and Slack's clients are loaded only when configured (several MB of heap each).
  const tracing: LlmTracing = config.env.TRACING_SECRET_KEY
    ? (await import("./observability/llm-tracing.ts")).createLlmTracing(config, agent.id, logger, secrets.values)
    : DISABLED_TRACING;
  const { registry: coreRegistry, skills } = coreTools(config, logger, options.hiddenPaths);
  // A tool's output is stored in the thread, which project viewers read: the secrets are masked.
  coreRegistry.maskSecrets(secrets.values);
  const tools = tracing.tools(coreRegistry);
  const catalog = new ContextWindowCatalog(config.env.CONTEXT_WINDOW_TOKENS);
  await catalog.refresh(config.env.MODELS_DEV_URL, logger);
  const live = new LiveHub();
  const usage = new UsageRecorder(new UsageStore(database.sqlite), logger);
  const interrupted = usage.store.closeInterrupted();
  if (interrupted > 0)
    logger.warn({ sessions: interrupted }, "voice sessions cut by a stop were closed at their last write");
  const pruneUsage = () => {
    try {
      const pruned = usage.store.prune(config.env.USAGE_RETENTION_DAYS);
      if (pruned.modelCalls + pruned.voiceSessions > 0) logger.info({ ...pruned }, "old usage records deleted");
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "old usage records could not be deleted");
    }
  };
  pruneUsage();
  const pruneTimer = setInterval(pruneUsage, 24 * 3_600_000);
  pruneTimer.unref();
  const memory = new MemoryStore(
    database.sqlite,
    tracing.embedder(options.embedder !== undefined ? options.embedder : createEmbedder(config)),
    logger,
    {
      useExtension: options.vectorExtension !== false,
      vectorPath: config.databasePath === ":memory:" ? ":memory:" : `${config.databasePath}-vec`,
      maxNotes: config.env.MEMORY_MAX_NOTES,
    },
  );

  // The queue calls back into deps, which holds the queue: tied together once both exist.
  let deps: RuntimeDeps | undefined;
  const runs = new WebhookRunQueue({
    sqlite: database.sqlite,
    logger,
    executeRun: (run) => executeWebhookRun(deps as RuntimeDeps, run),
    notifyFailure: (run, error) => notifyWebhookFailure(deps as RuntimeDeps, run, error),
  });
  deps = {
    config,
    database,
    messages: new MessageWriter(database.sqlite),
    model: redactModelErrors(
      usage.model(tracing.model(options.model ?? new WorkerModelClient(config, options.modelOptions))),
      secrets.values,
    ),
    tools,
    skills,
    plugins: [],
    catalog,
    live,
    activity: new AgentActivity(),
    turns: new TurnControl(),
    // Replaced right below: the scheduler needs deps itself.
    scheduler: undefined as unknown as Scheduler,
    memory,
    onWebMessage: (message) => live.publishMessage(message),
    teamChat: options.teamChat ?? null,
    logger,
    tracing,
    telemetry,
    registry,
    secrets,
    deliveries: new DeliveryLog(database.sqlite),
    runs,
    usage,
    voice: { status: "off", reason: "not probed yet" },
  };
  const scheduler = new Scheduler(deps, options.clock);
  deps.scheduler = scheduler;
  // Built-in tools are registered before plugins, so a plugin cannot take their names.
  tools.register(scheduleTool(scheduler));
  tools.register(memoryTool(memory, telemetry));
  const voice = await setupVoice(config, tools, logger, options.voice, {
    messages: deps.messages,
    ...(deps.onWebMessage ? { onWebMessage: deps.onWebMessage } : {}),
    telemetry,
    usage: usage.store,
  });
  deps.voice = voice.availability;
  deps.plugins = await loadPlugins(config.pluginsDir, tools, logger);
  // Team chat boots in the background: the runtime serves whatever Slack answers.
  const slack: SlackTeamChat | undefined =
    options.teamChat === undefined && config.env.CHAT_BOT_TOKEN
      ? new (await import("./chat/slack/adapter.ts")).SlackTeamChat(deps, options.slack)
      : undefined;
  if (slack) deps.teamChat = slack;
  telemetry.emit("agent.started", {
    "agent.id": agent.id,
    provider: config.provider,
    "gateway.used": Boolean(config.env.GATEWAY_API_URL),
    "tracing.enabled": tracing.enabled,
    "team_chat.enabled": Boolean(deps.teamChat),
    "plugins.count": deps.plugins.length,
  });
  // Where the server listens decides whether the Host check applies by default: set by listen().
  let hostPolicy = hostPolicyOf(config);
  const app = createRuntimeApp(deps, () => hostPolicy);
  slack?.start();
  await runs.recover();
  await scheduler.recover();
  if (options.scheduleTimer !== false) scheduler.start();
  // Notes left without a vector (a failed call, a model change) are embedded in the background.
  void memory.embedPending();
  const embedTimer = setInterval(() => void memory.embedPending(), 60_000);
  embedTimer.unref();
  const heartbeat = new Heartbeat(deps);
  heartbeat.start();

  let server: Server | undefined;
  return {
    app,
    deps,
    agentId: agent.id,
    heartbeat,
    listen(port = config.port, host = config.host) {
      hostPolicy = hostPolicyOf(config, host);
      return new Promise((resolve, reject) => {
        const s = createRuntimeServer(app.fetch, host, config.keepAliveTimeoutMs);
        s.once("error", reject);
        s.listen(port, host, () => {
          const info = s.address() as AddressInfo;
          const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
          resolve({ port: info.port, url: `http://${shownHost}:${info.port}` });
        });
        server = s;
      });
    },
    async close() {
      const s = server;
      if (s) {
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      }
      clearInterval(embedTimer);
      clearInterval(pruneTimer);
      await slack?.close();
      await heartbeat.stop();
      await memory.embedPending();
      await scheduler.close();
      await runs.close();
      await voice.meetings?.close();
      // Only the client built here is closed; one passed in belongs to the caller.
      if (!options.model) await deps.model.close?.();
      await Promise.all([tracing.shutdown(), otlp.shutdown()]);
      await database.close();
    },
  };
}

/**
 * Refuses what the provider SDKs would refuse of the process environment: they read it themselves
 * when their clients are built, on the first model call and the first embedding, which is too late
 * to stop the start. `processEnv` is the environment they will see (not `<AGENT_HOME>/.env`, which
 * never reaches it); a client passed in (`options.model`, `options.embedder`) is not checked.
 */
export function checkProviderEnvironment(
  config: RuntimeConfig,
  processEnv: Record<string, string | undefined>,
  options: Pick<RuntimeOptions, "model" | "embedder"> = {},
): void {
  const conflicts = [
    ...(options.model ? [] : chatEnvironmentConflicts(config, processEnv)),
    ...(options.embedder !== undefined ? [] : embeddingEnvironmentConflicts(config, processEnv)),
  ];
  const [first, ...rest] = conflicts;
  if (!first) return;
  throw new ConfigError(first.variable, [first.message, ...rest.map((c) => `${c.variable}: ${c.message}`)].join("; "));
}

/** Reads the environment (and `<AGENT_HOME>/.env`), builds the runtime and listens on PORT. */
export async function startRuntime(
  env: Record<string, string | undefined> = process.env,
  options: RuntimeOptions = {},
): Promise<Runtime & { url: string }> {
  const config = loadConfig(readEnvironment(env));
  checkProviderEnvironment(config, env, options);
  // A checkout builds its web UI on the first start and after its sources change (a few seconds).
  await ensureWebAssets(options.logger ?? runtimeLogger(config.env.LOG_LEVEL));
  const runtime = await createRuntime(config, options);
  const { url } = await runtime.listen();
  runtime.deps.logger.info(
    { url, provider: config.provider, gateway: Boolean(config.env.GATEWAY_API_URL), agentId: runtime.agentId },
    "agent runtime listening",
  );
  return { ...runtime, url };
}
