// LLM tracing to Langfuse (TRACING_SECRET_KEY): one trace per agent run, a `generation` per model
// call, a `tool` per tool call, an `embedding` per embedding batch. Langfuse is where content
// belongs (the operator enabled it), so prompts and answers go there, truncated; nothing of it
// goes to the OTLP export. Spans are exported by Langfuse's span processor, in batches, on a
// tracer provider of their own (never the global one). Tracing never fails or slows a run: every
// tracing call is guarded, and export happens off the request path with a bounded queue.
import { AsyncLocalStorage } from "node:async_hooks";
import { ExportCounter, registerExporter } from "@agentplane/telemetry";
import { LangfuseSpanProcessor } from "@langfuse/otel";
import { setLangfuseTracerProvider, startObservation } from "@langfuse/tracing";
import type { Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  BasicTracerProvider,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config.ts";
import { credentialValues, redactCredentials } from "./credentials.ts";
import { DISABLED_TRACING, type LlmTracing, type RunKind, type RunMeta } from "./tracing-off.ts";

/** Inputs and outputs sent to Langfuse are cut at this many characters (documented in the README). */
export const TRACE_CONTENT_LIMIT = 8192;

/** Spans waiting for Langfuse at most (the batch processor's own queue size). */
const QUEUE = 2048;

/** What every observation kind used here offers (spans, agents, generations, tools, embeddings). */
interface Observation {
  readonly otelSpan: Span;
  update(attributes: Record<string, unknown>): unknown;
  end(): void;
}

/** startObservation with the option shapes of every kind used here. */
const observe = (name: string, attributes: Record<string, unknown>, options: Record<string, unknown>): Observation =>
  (startObservation as unknown as (n: string, a: unknown, o: unknown) => Observation)(name, attributes, options);

export { DISABLED_TRACING, type LlmTracing, type RunKind, type RunMeta };

/**
 * Content as traced: every secret value replaced (a tool that read `.env`, a model that repeated
 * a token, a webhook payload carrying its signing secret), then cut at TRACE_CONTENT_LIMIT.
 * Objects stay objects when nothing changes. `secrets` is asked each time: webhook secrets change.
 */
const tracedContent =
  (secrets: () => readonly string[]) =>
  (value: unknown): unknown => {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (text === undefined) return undefined;
    const clean = redactCredentials(text, secrets());
    if (clean.length > TRACE_CONTENT_LIMIT) return `${clean.slice(0, TRACE_CONTENT_LIMIT)}… [truncated]`;
    if (clean === text) return value;
    if (typeof value === "string") return clean;
    try {
      return JSON.parse(clean);
    } catch {
      return clean;
    }
  };

/** `secrets`: the values never traced (RuntimeSecrets' values; the credentials alone by default). */
export function createLlmTracing(
  config: RuntimeConfig,
  agentId: string,
  logger: Logger,
  secrets?: () => readonly string[],
): LlmTracing {
  const { TRACING_SECRET_KEY: secretKey, TRACING_PUBLIC_KEY: publicKey, TRACING_BASE_URL: baseUrl } = config.env;
  if (!secretKey) return DISABLED_TRACING;
  const credentials = credentialValues(config.env);
  const cut = tracedContent(secrets ?? (() => credentials));
  // Redacted before it is cut: a cut through a secret leaves a piece no redaction recognises.
  const message = (err: unknown) => (cut(String((err as Error)?.message ?? err)) as string).slice(0, 500);
  // Langfuse's own exporter, counted: a Langfuse that refuses or is down shows at `/health`
  // (`telemetry.langfuse`) and is logged at most once a minute.
  const counter = new ExportCounter("langfuse", logger);
  const unregister = registerExporter("langfuse", counter);
  const exporter = counter.wrap<ReadableSpan>(
    new OTLPTraceExporter({
      url: `${baseUrl.replace(/\/+$/, "")}/api/public/otel/v1/traces`,
      headers: {
        authorization: `Basic ${Buffer.from(`${publicKey ?? ""}:${secretKey}`).toString("base64")}`,
        "x-langfuse-public-key": publicKey ?? "",
        "x-langfuse-sdk-name": "javascript",
      },
      timeoutMillis: 10_000,
    }),
    true,
  ) as SpanExporter;
  const processor = new LangfuseSpanProcessor({
    exporter,
    publicKey: publicKey ?? "",
    secretKey,
    baseUrl,
    exportMode: "batched",
    flushAt: 64,
    flushInterval: 2,
    timeout: 10,
    mediaUploadEnabled: false,
    ...(config.env.DEPLOYMENT_ENVIRONMENT ? { environment: config.env.DEPLOYMENT_ENVIRONMENT } : {}),
  });
  // The processor's queue holds QUEUE spans: past that, a span is dropped here, counted and logged.
  const bounded: SpanProcessor = {
    onStart: (span, context) => processor.onStart(span, context),
    onEnd: (span) => {
      if (counter.pending >= QUEUE) return counter.dropped();
      counter.pending += 1;
      processor.onEnd(span);
    },
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
  const provider = new BasicTracerProvider({ spanProcessors: [bounded] });
  setLangfuseTracerProvider(provider);
  const current = new AsyncLocalStorage<Observation>();
  let failures = 0;
  /** Tracing trouble is logged once, then counted: it must never reach the run. */
  const guard = <T>(what: string, f: () => T): T | undefined => {
    try {
      return f();
    } catch (err) {
      if (failures++ === 0) logger.warn({ err: (err as Error).message, what }, "LLM tracing failed; the run goes on");
      return undefined;
    }
  };
  const child = (name: string, attributes: Record<string, unknown>, asType: "generation" | "tool" | "embedding") =>
    guard("start", () => {
      const parent = current.getStore();
      return observe(
        name,
        attributes,
        parent ? { asType, parentSpanContext: parent.otelSpan.spanContext() } : { asType },
      );
    });

  return {
    enabled: true,
    async run(kind, meta, fn) {
      const parent = current.getStore();
      const observation = guard("run", () => {
        const metadata = { agentId, ...meta };
        if (parent) return observe(kind, { metadata }, { parentSpanContext: parent.otelSpan.spanContext() });
        const root = observe(kind, { metadata }, { asType: "agent" });
        root.otelSpan.setAttributes({
          "langfuse.trace.name": kind,
          ...(meta.threadId ? { "session.id": meta.threadId } : {}),
          "langfuse.trace.metadata.agent_id": agentId,
          ...(meta.runId ? { "langfuse.trace.metadata.run_id": meta.runId } : {}),
          ...(meta.threadId ? { "langfuse.trace.metadata.thread_id": meta.threadId } : {}),
        });
        return root;
      });
      if (!observation) return fn();
      try {
        const result = await current.run(observation, fn);
        guard("end", () => observation.end());
        return result;
      } catch (err) {
        guard("end", () => {
          observation.update({ level: "ERROR", statusMessage: message(err) });
          observation.end();
        });
        throw err;
      }
    },
    model(client) {
      return {
        provider: client.provider,
        endpoint: client.endpoint,
        ...(client.close ? { close: () => (client.close as () => Promise<void>).call(client) } : {}),
        async createMessage(request, options = {}) {
          const generation = child(
            "model-call",
            {
              model: request.model,
              modelParameters: { max_tokens: request.max_tokens },
              input: cut({ system: request.system, messages: request.messages }),
              metadata: { provider: client.provider, tools: request.tools?.length ?? 0 },
            },
            "generation",
          );
          let firstToken: Date | undefined;
          const onText = (delta: string) => {
            firstToken ??= new Date();
            options.onText?.(delta);
          };
          try {
            const message = await client.createMessage(request, { ...options, onText });
            guard("generation", () => {
              const usage = message.usage as unknown as Record<string, number | null | undefined>;
              generation?.update({
                model: message.model || request.model,
                output: cut(message.content),
                usageDetails: {
                  input: usage.input_tokens ?? 0,
                  output: usage.output_tokens ?? 0,
                  cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
                  cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
                },
                ...(firstToken ? { completionStartTime: firstToken } : {}),
                metadata: { provider: client.provider, stopReason: message.stop_reason },
              });
              generation?.end();
            });
            return message;
          } catch (err) {
            guard("generation", () => {
              generation?.update({ level: "ERROR", statusMessage: message(err) });
              generation?.end();
            });
            throw err;
          }
        },
      };
    },
    tools(registry) {
      const run = registry.run.bind(registry);
      registry.run = async (name, input, context, offer) => {
        const observation = child(name, { input: cut(input) }, "tool");
        const started = performance.now();
        const outcome = await run(name, input, context, offer);
        guard("tool", () => {
          observation?.update({
            output: cut(outcome.content),
            metadata: { success: !outcome.isError, durationMs: Math.round(performance.now() - started) },
            ...(outcome.isError ? { level: "WARNING" } : {}),
          });
          observation?.end();
        });
        return outcome;
      };
      return registry;
    },
    embedder(embedder) {
      if (!embedder) return embedder;
      return {
        model: embedder.model,
        async embed(texts) {
          const observation = child("embed", { model: embedder.model, input: cut(texts) }, "embedding");
          try {
            const vectors = await embedder.embed(texts);
            guard("embedding", () => {
              observation?.update({ metadata: { texts: texts.length } });
              observation?.end();
            });
            return vectors;
          } catch (err) {
            guard("embedding", () => {
              observation?.update({ level: "ERROR", statusMessage: message(err) });
              observation?.end();
            });
            throw err;
          }
        },
      };
    },
    async shutdown(timeoutMs = 5000) {
      await Promise.race([
        provider.shutdown().catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
      ]);
      setLangfuseTracerProvider(null);
      unregister();
    },
  };
}
