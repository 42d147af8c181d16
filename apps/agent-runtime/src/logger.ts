import { LOG_REDACTION } from "@agentplane/service-kit";
import pino, { type DestinationStream, type Logger } from "pino";

/**
 * The runtime's own logger (when its embedder gives none): credentials and tokens are written as
 * `[redacted]` wherever a logged object carries them, as the platform's services do.
 */
export function runtimeLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, name: "agent-runtime", redact: LOG_REDACTION };
  return destination ? pino(options, destination) : pino(options);
}
