import { traceFields } from "@agentplane/telemetry";
import pino, { type Logger } from "pino";

export type { Logger };

/** Paths never written to logs: credentials and tokens wherever they appear. */
const REDACT = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
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

/** `destination`: where lines go instead of stdout (a test reading what the service logged). */
export function createLogger(
  name: string,
  level = process.env.LOG_LEVEL ?? "info",
  destination?: { write(line: string): void },
): Logger {
  // A line written while a traced request runs carries its trace_id and span_id.
  const options = { name, level, redact: { paths: REDACT, censor: "[redacted]" }, mixin: traceFields };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
