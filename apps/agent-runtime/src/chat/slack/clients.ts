import { LogLevel, type Logger as SlackLogger } from "@slack/logger";
import { SocketModeClient } from "@slack/socket-mode";
import { WebAPIPlatformError, WebClient } from "@slack/web-api";
import type { Logger } from "pino";

/**
 * The SDKs' logger, backed by the runtime's. Their debug output carries whole payloads, so it is
 * dropped; warnings and errors keep the SDK's wording (tokens are never in it: the SDK redacts
 * them, and the runtime never passes them to a log call).
 */
export function sdkLogger(logger: Logger, name: string): SlackLogger {
  const log = logger.child({ component: name });
  return {
    debug: () => {},
    info: (...msg: unknown[]) => log.debug(msg.map(String).join(" ")),
    warn: (...msg: unknown[]) => log.warn(msg.map(String).join(" ")),
    error: (...msg: unknown[]) => log.error(msg.map(String).join(" ")),
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: () => {},
  };
}

/**
 * Retries of one Web API call: network failures and 429s (the SDK first waits out Retry-After,
 * then lets the retry policy try again). Few and quick: a delivery that still fails is stored
 * and retried later by the delivery store, not held in a request.
 */
const RETRY = { retries: 3, factor: 2, minTimeout: 200, maxTimeout: 2000 };

/**
 * How long one Web API request may go unanswered. The SDK sets no timeout: a Slack that took the
 * request and never answered held it for the HTTP client's five-minute header wait, four times
 * over with the retries, and with it the webhook or the run that was posting and a turn's slot.
 * Slack answers in well under a second; the retry pass posts a stored delivery later.
 */
export const WEB_API_TIMEOUT_MS = 10_000;

export function createWebClient(
  token: string,
  apiUrl: string,
  logger: Logger,
  timeoutMs = WEB_API_TIMEOUT_MS,
): WebClient {
  return new WebClient(token, {
    slackApiUrl: apiUrl,
    logger: sdkLogger(logger, "slack-web"),
    retryConfig: RETRY,
    timeout: timeoutMs,
  });
}

export interface SocketTimeouts {
  /** How long without a server ping before the connection counts as lost (Slack pings about every 10 s). */
  serverPingTimeoutMs?: number;
  clientPingTimeoutMs?: number;
}

export function createSocketClient(appToken: string, apiUrl: string, logger: Logger, timeouts: SocketTimeouts) {
  return new SocketModeClient({
    appToken,
    logger: sdkLogger(logger, "slack-socket"),
    serverPingTimeout: timeouts.serverPingTimeoutMs ?? 30_000,
    clientPingTimeout: timeouts.clientPingTimeoutMs ?? 5_000,
    clientOptions: { slackApiUrl: apiUrl, timeout: WEB_API_TIMEOUT_MS },
  });
}

/** A Web API failure as a short code for logs and status: Slack's error name, never a token. */
export function slackErrorCode(err: unknown): string {
  if (err instanceof WebAPIPlatformError) return err.data.error;
  if (err && typeof err === "object" && "code" in err && typeof err.code === "string") {
    const message = "message" in err && typeof err.message === "string" ? `: ${err.message}` : "";
    return `${err.code}${message}`.slice(0, 300);
  }
  return String(err instanceof Error ? err.message : err).slice(0, 300);
}

export function isAuthError(err: unknown): boolean {
  return (
    err instanceof WebAPIPlatformError &&
    ["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"].includes(err.data.error)
  );
}
