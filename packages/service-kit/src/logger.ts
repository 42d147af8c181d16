import { traceFields } from "@agentplane/telemetry";
import pino, { type Logger } from "pino";

export type { Logger };

/**
 * Paths never written to logs: credentials and tokens wherever they appear (the agent runtime's
 * logger uses them too).
 */
export const LOG_REDACT_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "cookie",
  "*.cookie",
  '*["x-api-key"]',
  '*["api-key"]',
  "*.token",
  "token",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "privateKey",
  "*.privateKey",
  "apiKey",
  "*.apiKey",
  "bootstrapToken",
];

/** What pino's `redact` option takes: the paths above, replaced by a marker. */
export const LOG_REDACTION = { paths: LOG_REDACT_PATHS, censor: "[redacted]" };

/** `destination`: where lines go instead of stdout (a test reading what the service logged). */
export function createLogger(
  name: string,
  level = process.env.LOG_LEVEL ?? "info",
  destination?: { write(line: string): void },
): Logger {
  // A line written while a traced request runs carries its trace_id and span_id.
  const options = { name, level, redact: LOG_REDACTION, mixin: traceFields };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
