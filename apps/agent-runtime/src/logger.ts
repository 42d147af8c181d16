import { LOG_REDACTION } from "@agentplane/service-kit";
import pino, { type DestinationStream, type Logger } from "pino";
import { redactCredentials } from "./observability/credentials.ts";

/**
 * The runtime's own logger (when its embedder gives none): credentials and tokens are written as
 * `[redacted]` wherever a logged object carries them, as the platform's services do; and with
 * `secrets` (the runtime's credential values and webhook secrets, see RuntimeSecrets) every one
 * of those values is `[redacted]` wherever a line holds it, a message or an error's text included.
 */
export function runtimeLogger(
  level: string,
  destination?: DestinationStream,
  secrets?: () => readonly string[],
): Logger {
  const options = {
    level,
    name: "agent-runtime",
    redact: LOG_REDACTION,
    ...(secrets ? { hooks: { streamWrite: (line: string) => redactCredentials(line, secrets()) } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
