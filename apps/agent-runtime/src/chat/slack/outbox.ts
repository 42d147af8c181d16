import type { WebClient } from "@slack/web-api";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { RuntimeDatabase, TeamChatDeliveryTable } from "../../db/schema/index.ts";
import { redactCredentials } from "../../observability/credentials.ts";
import {
  createDelivery,
  dueDeliveries,
  markDelivered,
  markDeliveryFailed,
  markDeliveryGivenUp,
  recordChunkSent,
  unlinkChannel,
} from "../store.ts";
import { slackErrorCode } from "./clients.ts";
import { slackText } from "./escape.ts";
import { splitForSlack } from "./split.ts";

/** Waits before the n-th retry of a stored delivery: `baseMs` (15 s) doubling, at most an hour. */
export function retryDelayMs(attempts: number, baseMs = 15_000): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

/** How long a delivery Slack keeps refusing is retried: past it, it is given up. */
export const DELIVERY_GIVE_UP_MS = 24 * 3600 * 1000;

/**
 * Slack's answers that no retry changes: the channel is gone, archived or closed to the bot, or
 * the message itself is refused. Such a delivery is given up at once instead of retried hourly
 * for ever.
 */
const PERMANENT_ERRORS = new Set([
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "msg_too_long",
  "no_text",
  "restricted_action",
  "cannot_reply_to_message",
  "invalid_arguments",
]);

/** Slack's answers meaning the bot cannot post in the channel at all: a linked one is unlinked. */
const CHANNEL_GONE_ERRORS = new Set(["channel_not_found", "not_in_channel", "is_archived"]);

/**
 * Every outbound post goes through the delivery store: stored first, posted chunk by chunk (each
 * chunk recorded, so a retry resumes instead of repeating), and kept for a later retry when Slack
 * still refuses after the Web API client's own retries, for a day (DELIVERY_GIVE_UP_MS) unless
 * Slack's answer says no retry can succeed. Failures are logged with the delivery id.
 */
export class SlackOutbox {
  readonly #db: Kysely<RuntimeDatabase>;
  readonly #web: WebClient;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #retrying: Promise<void> | undefined;
  readonly #retryBaseMs: number | undefined;
  readonly #secrets: () => readonly string[];

  /** `secrets`: the runtime's secret values, never posted (see `RuntimeSecrets`). */
  constructor(
    db: Kysely<RuntimeDatabase>,
    web: WebClient,
    logger: Logger,
    options: { retryBaseMs?: number | undefined; secrets?: () => readonly string[] } = {},
  ) {
    this.#retryBaseMs = options.retryBaseMs;
    this.#secrets = options.secrets ?? (() => []);
    this.#db = db;
    this.#web = web;
    this.#logger = logger;
  }

  /**
   * Posts `text` (split at Slack's limit) to a channel, in a thread when `threadTs` is set. A
   * credential value of the runtime in it becomes `[redacted]`: a turn that read `.env` in a
   * channel posts no key there. The text is escaped for Slack (`slackText`) and stored so, unless it is the runtime's own
   * `markup` (a mention it means to make). With `replaceTs` (a status message of the bot's), the
   * first piece replaces that message's text in place (`chat.update`) instead of posting; when
   * that fails (the status was deleted, say) and on a later retry, it is posted as a new message.
   * Never throws.
   */
  async send(
    channel: string,
    threadTs: string | null,
    text: string,
    options: { replaceTs?: string | undefined; markup?: boolean } = {},
  ): Promise<boolean> {
    const clean = redactCredentials(text, this.#secrets());
    const row = await createDelivery(this.#db, {
      channelId: channel,
      threadTs,
      text: options.markup ? clean : slackText(clean),
    });
    return this.#attempt(row, options.replaceTs);
  }

  async #attempt(row: TeamChatDeliveryTable, replaceTs?: string, now = Date.now()): Promise<boolean> {
    const chunks = splitForSlack(row.text);
    let sent = row.chunks_sent;
    try {
      for (; sent < chunks.length; sent++) {
        const text = chunks[sent] as string;
        const post = () =>
          this.#web.chat.postMessage({
            channel: row.channel_id,
            text,
            ...(row.thread_ts ? { thread_ts: row.thread_ts } : {}),
          });
        // A status that cannot be replaced (deleted in Slack, say) does not hold the answer back.
        if (sent === 0 && replaceTs)
          await this.#web.chat.update({ channel: row.channel_id, ts: replaceTs, text }).catch(post);
        else await post();
        await recordChunkSent(this.#db, row.id, sent + 1);
      }
      await markDelivered(this.#db, row.id);
      if (row.attempts > 0) this.#logger.info({ deliveryId: row.id }, "team-chat delivery posted on retry");
      return true;
    } catch (err) {
      const attempts = row.attempts + 1;
      const next = new Date(now + retryDelayMs(attempts, this.#retryBaseMs));
      const error = slackErrorCode(err);
      if (PERMANENT_ERRORS.has(error) || now - Date.parse(row.created_at) >= DELIVERY_GIVE_UP_MS) {
        await markDeliveryGivenUp(this.#db, row.id, attempts, error);
        this.#logger.error(
          { deliveryId: row.id, channel: row.channel_id, attempts, error },
          "team-chat delivery given up: Slack refused it for good, or for a day",
        );
        // Left linked, the channel would take (and lose) every later delivery.
        if (CHANNEL_GONE_ERRORS.has(error) && (await unlinkChannel(this.#db, row.channel_id))) {
          this.#logger.warn(
            { channel: row.channel_id, error },
            "team chat unlinked a channel it can no longer post in",
          );
        }
        return false;
      }
      await markDeliveryFailed(this.#db, row.id, attempts, error, next);
      this.#logger.warn(
        { deliveryId: row.id, channel: row.channel_id, attempts, error, retryAt: next.toISOString() },
        "team-chat delivery failed; stored and retried later",
      );
      return false;
    }
  }

  /** Posts every stored delivery that is due, oldest first (one pass at a time). */
  retryDue(now = new Date()): Promise<void> {
    this.#retrying ??= (async () => {
      try {
        for (const row of await dueDeliveries(this.#db, now)) await this.#attempt(row, undefined, now.getTime());
      } finally {
        this.#retrying = undefined;
      }
    })();
    return this.#retrying;
  }

  start(intervalMs = 15_000): void {
    this.#timer = setInterval(() => void this.retryDue().catch(() => {}), intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#retrying;
  }
}
