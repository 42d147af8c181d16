// OpenTelemetry export for every deployable, composed explicitly: a private tracer provider and
// logger provider (never the global ones, so nothing else in the process exports through them and
// the SDK's environment auto-configuration never runs), OTLP/HTTP to the configured collector.
// Off when no endpoint is set: a no-op tracer, no exporter, no socket.
import {
  type Attributes,
  type Context,
  INVALID_SPAN_CONTEXT,
  type Span,
  type SpanOptions,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { type AnyValueMap, SeverityNumber } from "@opentelemetry/api-logs";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type LogRecordExporter,
  type ReadableLogRecord,
} from "@opentelemetry/sdk-logs";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { TelemetrySettings } from "./config.ts";
import { ExportCounter, type ExportStats, registerExporter, type WarnLogger } from "./export-health.ts";

export type { ExportStats, WarnLogger };

export interface Telemetry {
  readonly enabled: boolean;
  /** Spans of this deployable (route templates, ids, counts and durations only: never content). */
  readonly tracer: Tracer;
  /** One OTLP log record (a product telemetry event or a log line), attributes as given. */
  emit(
    name: string,
    attributes: Attributes,
    options?: { severity?: "info" | "warn" | "error"; context?: Context },
  ): void;
  stats(): ExportStats;
  /** Flushes what is queued, bounded by `timeoutMs`, then stops exporting. */
  shutdown(timeoutMs?: number): Promise<void>;
}

const QUEUE = 2048;

/** A span that records nothing, for when export is off (spans then cost one object). */
export const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const noopTracer: Tracer = {
  startSpan: () => NOOP_SPAN,
  startActiveSpan: ((_name: string, ...rest: unknown[]) => {
    const fn = rest[rest.length - 1] as (span: Span) => unknown;
    return fn(NOOP_SPAN);
  }) as Tracer["startActiveSpan"],
};

export const DISABLED_TELEMETRY: Telemetry = {
  enabled: false,
  tracer: noopTracer,
  emit: () => {},
  stats: () => ({ exported: 0, failedBatches: 0, dropped: 0 }),
  shutdown: async () => {},
};

export function createTelemetry(settings: TelemetrySettings, logger: WarnLogger): Telemetry {
  if (!settings.endpoint) return DISABLED_TELEMETRY;
  const base = settings.endpoint.replace(/\/+$/, "");
  const headers: Record<string, string> = settings.apiKey ? { "x-api-key": settings.apiKey } : {};
  const resource = resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.version": settings.serviceVersion,
    "deployment.environment.name": settings.environment,
  });
  const counter = new ExportCounter("otlp", logger);
  const unregister = registerExporter("otlp", counter);
  const batch = {
    maxQueueSize: QUEUE,
    maxExportBatchSize: 512,
    scheduledDelayMillis: 1000,
    exportTimeoutMillis: 10_000,
  };

  const spanExporter = counter.wrap<ReadableSpan>(
    new OTLPTraceExporter({ url: `${base}/v1/traces`, headers, timeoutMillis: 10_000 }),
    true,
  ) as SpanExporter;
  const spans = new BatchSpanProcessor(spanExporter, batch);
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [
      {
        // Counts what the batch processor will drop when its queue is full.
        onStart: () => {},
        onEnd: (span) => {
          if (counter.pending >= QUEUE) {
            counter.dropped();
            return;
          }
          counter.pending += 1;
          spans.onEnd(span);
        },
        forceFlush: () => spans.forceFlush(),
        shutdown: () => spans.shutdown(),
      },
    ],
  });

  // Log records are bounded by their own processor's queue.
  const logExporter = counter.wrap<ReadableLogRecord>(
    new OTLPLogExporter({ url: `${base}/v1/logs`, headers, timeoutMillis: 10_000 }),
  ) as LogRecordExporter;
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: logExporter, ...batch })],
  });
  const otelLogger = loggerProvider.getLogger(settings.serviceName, settings.serviceVersion);
  const severities = { info: SeverityNumber.INFO, warn: SeverityNumber.WARN, error: SeverityNumber.ERROR };

  return {
    enabled: true,
    tracer: tracerProvider.getTracer(settings.serviceName, settings.serviceVersion),
    emit(name, attributes, options = {}) {
      otelLogger.emit({
        eventName: name,
        body: name,
        severityNumber: severities[options.severity ?? "info"],
        severityText: (options.severity ?? "info").toUpperCase(),
        attributes: attributes as AnyValueMap,
        ...(options.context ? { context: options.context } : {}),
      });
    },
    stats: () => ({ ...counter.stats }),
    async shutdown(timeoutMs = 5000) {
      const bounded = (p: Promise<unknown>) =>
        Promise.race([p.catch(() => {}), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
      await Promise.all([bounded(tracerProvider.shutdown()), bounded(loggerProvider.shutdown())]);
      unregister();
    },
  };
}

export type { Attributes, Span, SpanOptions, Tracer };
