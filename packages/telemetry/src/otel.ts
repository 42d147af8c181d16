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
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
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

/** What the platform's loggers offer; telemetry reports its own trouble through one. */
export interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface ExportStats {
  /** Spans and log records the collector accepted. */
  exported: number;
  /** Batches the collector refused or that failed (down, 401, timeout). */
  failedBatches: number;
  /** Records dropped because the queue was full (a collector slower than the load). */
  dropped: number;
  lastError?: string;
}

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
const FAILURE_LOG_INTERVAL_MS = 60_000;

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

/**
 * Counts what an exporter achieves and reports failures at most once a minute, so a collector
 * that is down or refuses costs one log line a minute and never an exception in the caller.
 */
class CountingExporter<T> {
  private readonly inner: { export(items: T[], done: (r: ExportResult) => void): void; shutdown(): Promise<void> };
  private readonly stats: ExportStats;
  private readonly report: (error: string) => void;
  private readonly pending: { count: number };
  constructor(
    inner: { export(items: T[], done: (r: ExportResult) => void): void; shutdown(): Promise<void> },
    stats: ExportStats,
    report: (error: string) => void,
    pending: { count: number },
  ) {
    this.inner = inner;
    this.stats = stats;
    this.report = report;
    this.pending = pending;
  }
  export(items: T[], done: (result: ExportResult) => void): void {
    this.inner.export(items, (result) => {
      this.pending.count = Math.max(0, this.pending.count - items.length);
      if (result.code === ExportResultCode.SUCCESS) this.stats.exported += items.length;
      else {
        this.stats.failedBatches += 1;
        this.report(result.error?.message ?? "export failed");
      }
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export function createTelemetry(settings: TelemetrySettings, logger: WarnLogger): Telemetry {
  if (!settings.endpoint) return DISABLED_TELEMETRY;
  const base = settings.endpoint.replace(/\/+$/, "");
  const headers: Record<string, string> = settings.apiKey ? { "x-api-key": settings.apiKey } : {};
  const resource = resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.version": settings.serviceVersion,
    "deployment.environment.name": settings.environment,
  });
  const stats: ExportStats = { exported: 0, failedBatches: 0, dropped: 0 };
  let lastReport = 0;
  const report = (error: string) => {
    stats.lastError = error;
    const now = Date.now();
    if (now - lastReport < FAILURE_LOG_INTERVAL_MS) return;
    lastReport = now;
    logger.warn(
      { collector: "otlp", failedBatches: stats.failedBatches, dropped: stats.dropped, error },
      "telemetry export failing",
    );
  };
  const pending = { count: 0 };
  const batch = {
    maxQueueSize: QUEUE,
    maxExportBatchSize: 512,
    scheduledDelayMillis: 1000,
    exportTimeoutMillis: 10_000,
  };

  const spanExporter = new CountingExporter<ReadableSpan>(
    new OTLPTraceExporter({ url: `${base}/v1/traces`, headers, timeoutMillis: 10_000 }),
    stats,
    report,
    pending,
  ) as unknown as SpanExporter;
  const spans = new BatchSpanProcessor(spanExporter, batch);
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [
      {
        // Counts what the batch processor will drop when its queue is full.
        onStart: () => {},
        onEnd: (span) => {
          if (pending.count >= QUEUE) {
            stats.dropped += 1;
            report("queue full");
            return;
          }
          pending.count += 1;
          spans.onEnd(span);
        },
        forceFlush: () => spans.forceFlush(),
        shutdown: () => spans.shutdown(),
      },
    ],
  });

  const logExporter = new CountingExporter<ReadableLogRecord>(
    new OTLPLogExporter({ url: `${base}/v1/logs`, headers, timeoutMillis: 10_000 }),
    stats,
    report,
    { count: 0 },
  ) as unknown as LogRecordExporter;
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
    stats: () => ({ ...stats }),
    async shutdown(timeoutMs = 5000) {
      const bounded = (p: Promise<unknown>) =>
        Promise.race([p.catch(() => {}), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
      await Promise.all([bounded(tracerProvider.shutdown()), bounded(loggerProvider.shutdown())]);
    },
  };
}

export type { Attributes, Span, SpanOptions, Tracer };
