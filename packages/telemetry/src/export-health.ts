// How the process's telemetry export is doing, for `/health`: what each exporter (the OTLP
// collector, Langfuse) delivered, the batches that failed and the records dropped. A collector that
// refuses or is down is logged at most once a minute and counted here; it never touches a request.
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";

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
  /** Why the last batch failed, as a kind (`refused (401)`, `unreachable`…): never an address or a key. */
  lastError?: string;
}

const FAILURE_LOG_INTERVAL_MS = 60_000;

/** The kind of an export failure, without the collector's address or anything it answered. */
export function failureKind(error: Error | undefined): string {
  if (!error) return "failed";
  const code = (error as { code?: unknown }).code;
  if (typeof code === "number" && code >= 100 && code < 600) return `refused (${code})`;
  const text = `${(error as { code?: unknown }).code ?? ""} ${error.message} ${(error.cause as Error | undefined)?.message ?? ""}`;
  if (/timeout|timed out|aborted/i.test(text)) return "timeout";
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|socket hang up|fetch failed/i.test(text))
    return "unreachable";
  if (/queue full/i.test(text)) return "queue full";
  return "failed";
}

/** One exporter's counts, and its failure log line at most once a minute. */
export class ExportCounter {
  readonly stats: ExportStats = { exported: 0, failedBatches: 0, dropped: 0 };
  /** Records handed to the exporter and not yet answered (bounds the queue). */
  pending = 0;
  private lastReport = 0;
  private readonly collector: string;
  private readonly logger: WarnLogger;

  constructor(collector: string, logger: WarnLogger) {
    this.collector = collector;
    this.logger = logger;
  }

  failed(kind: string): void {
    this.stats.lastError = kind;
    const now = Date.now();
    if (now - this.lastReport < FAILURE_LOG_INTERVAL_MS) return;
    this.lastReport = now;
    this.logger.warn(
      {
        collector: this.collector,
        failedBatches: this.stats.failedBatches,
        dropped: this.stats.dropped,
        error: kind,
      },
      "telemetry export failing",
    );
  }

  dropped(): void {
    this.stats.dropped += 1;
    this.failed("queue full");
  }

  /** `inner`, counting what it delivers and what fails; `queued`: its records count in `pending`. */
  wrap<T>(inner: Exporter<T>, queued = false): Exporter<T> {
    return {
      export: (items, done) => {
        inner.export(items, (result) => {
          if (queued) this.pending = Math.max(0, this.pending - items.length);
          if (result.code === ExportResultCode.SUCCESS) this.stats.exported += items.length;
          else {
            this.stats.failedBatches += 1;
            this.failed(failureKind(result.error));
          }
          done(result);
        });
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }
}

/** What the OpenTelemetry SDK's span and log record exporters have in common. */
export interface Exporter<T> {
  export(items: T[], done: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

const exporters = new Set<{ name: string; counter: ExportCounter }>();

/** Makes `counter` part of this process's `/health` under `name`; the returned function takes it out. */
export function registerExporter(name: string, counter: ExportCounter): () => void {
  const entry = { name, counter };
  exporters.add(entry);
  return () => exporters.delete(entry);
}

/**
 * The export counts of this process by exporter (`otlp`, `langfuse`), summed over instances; none
 * when nothing exports (export off: `/health` says nothing about it).
 */
export function exportHealth(): Record<string, ExportStats> | undefined {
  if (exporters.size === 0) return undefined;
  const out: Record<string, ExportStats> = {};
  for (const { name, counter } of exporters) {
    const sum = out[name] ?? { exported: 0, failedBatches: 0, dropped: 0 };
    out[name] = sum;
    sum.exported += counter.stats.exported;
    sum.failedBatches += counter.stats.failedBatches;
    sum.dropped += counter.stats.dropped;
    if (counter.stats.lastError) sum.lastError = counter.stats.lastError;
  }
  return out;
}
