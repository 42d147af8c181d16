import type { SocketModeClient } from "@slack/socket-mode";
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { RuntimeDeps } from "../../deps.ts";
import {
  cachedOwnerDm,
  cacheOwnerDm,
  forgetOldEvents,
  listChannels,
  newPairingCode,
  pairedOwner,
  toLinkedChannel,
} from "../store.ts";
import type { LinkedChannel, TeamChatAdapter, TeamChatDestination, TeamChatStatus } from "../team-chat.ts";
import { ChannelGuard, externallyShared } from "./channel-guard.ts";
import { createSocketClient, createWebClient, isAuthError, type SocketTimeouts, slackErrorCode } from "./clients.ts";
import { SlackInbound } from "./inbound.ts";
import { SlackOutbox } from "./outbox.ts";
import { boundDelivery } from "./split.ts";
import type { SlackChat, SlackIdentity } from "./types.ts";

export interface SlackTeamChatOptions extends SocketTimeouts {
  /** How often stored deliveries that failed are looked at, and the first wait before a retry. */
  retryIntervalMs?: number;
  retryBaseMs?: number;
  /** Wait before booting again after Slack could not be reached (not after a refusal). */
  bootRetryMs?: number;
  /** How long one Web API request may go unanswered (WEB_API_TIMEOUT_MS). */
  webTimeoutMs?: number;
}

/**
 * The Slack adapter: the Web API for reads and posts, Socket Mode for events. Boot checks the bot
 * token (auth.test), resolves its app id (bots.info) and checks the socket's app id (`hello`);
 * a mismatch or an invalid token disables team chat with one log line, never the runtime.
 */
export class SlackTeamChat implements TeamChatAdapter, SlackChat {
  readonly web: WebClient;
  readonly outbox: SlackOutbox;
  readonly channels: ChannelGuard;
  #socket: SocketModeClient | undefined;
  #status: TeamChatStatus = { state: "connecting", detail: null, appId: null, botUserId: null };
  #identity: SlackIdentity | undefined;
  #inbound: SlackInbound | undefined;
  #bootTimer: NodeJS.Timeout | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #deps: RuntimeDeps;
  readonly #logger: Logger;
  readonly #options: SlackTeamChatOptions;
  readonly #botToken: string;
  readonly #appToken: string;

  constructor(deps: RuntimeDeps, options: SlackTeamChatOptions = {}) {
    const env = deps.config.env;
    if (!env.CHAT_BOT_TOKEN || !env.CHAT_APP_TOKEN)
      throw new Error("team chat needs CHAT_BOT_TOKEN and CHAT_APP_TOKEN");
    this.#deps = deps;
    this.#options = options;
    this.#botToken = env.CHAT_BOT_TOKEN;
    this.#appToken = env.CHAT_APP_TOKEN;
    this.#logger = deps.logger.child({ component: "team-chat" });
    this.web = createWebClient(this.#botToken, env.CHAT_API_URL, this.#logger, options.webTimeoutMs);
    this.outbox = new SlackOutbox(deps.database.db, this.web, this.#logger, {
      retryBaseMs: options.retryBaseMs,
      secrets: deps.secrets.values,
    });
    this.channels = new ChannelGuard(env.CHAT_ALLOWED_CHANNELS, this.#logger);
  }

  status(): TeamChatStatus {
    return { ...this.#status };
  }

  mode(): "personal" | "team" {
    return this.#deps.config.env.CHAT_MODE;
  }

  get identity(): SlackIdentity | undefined {
    return this.#identity;
  }

  /** The conversation handler (tests wait on its turns). */
  get inbound(): SlackInbound | undefined {
    return this.#inbound;
  }

  /** Boots in the background: the runtime serves web chat and webhooks whatever Slack answers. */
  start(): void {
    this.outbox.start(this.#options.retryIntervalMs);
    this.#pruneTimer = setInterval(() => forgetOldEvents(this.#deps.database.sqlite), 3_600_000);
    this.#pruneTimer.unref();
    void this.#boot();
  }

  #disable(detail: string, line: string, fields: Record<string, unknown> = {}): void {
    this.#status = { ...this.#status, state: "disabled", detail };
    this.#logger.error({ ...fields, teamChat: "disabled" }, line);
    void this.#socket?.disconnect().catch(() => {});
  }

  async #boot(): Promise<void> {
    const env = this.#deps.config.env;
    let identity: SlackIdentity;
    try {
      const auth = await this.web.auth.test();
      if (!auth.user_id || !auth.bot_id)
        throw new Error("auth.test named no bot user: CHAT_BOT_TOKEN must be a bot token");
      const bot = await this.web.bots.info({ bot: auth.bot_id });
      const appId = bot.bot?.app_id;
      if (!appId) throw new Error("bots.info named no app id for the bot");
      identity = { botUserId: auth.user_id, botId: auth.bot_id, appId };
    } catch (err) {
      if (isAuthError(err)) {
        const code = slackErrorCode(err);
        this.#disable(code, `team chat disabled: CHAT_BOT_TOKEN was refused by auth.test (${code})`);
        return;
      }
      this.#retryBoot(err);
      return;
    }
    this.#identity = identity;
    this.#status = { ...this.#status, appId: identity.appId, botUserId: identity.botUserId };
    const expected = env.CHAT_EXPECTED_APP_ID;
    if (expected && expected !== identity.appId) {
      this.#disable(
        "app id mismatch",
        `team chat disabled: app id mismatch: CHAT_EXPECTED_APP_ID is ${expected} but the bot token belongs to app ${identity.appId}`,
        { expectedAppId: expected, botAppId: identity.appId },
      );
      return;
    }
    this.#inbound = new SlackInbound(this.#deps, this, identity, this.#logger);
    await this.#connect(identity, expected ?? identity.appId);
  }

  #retryBoot(err: unknown): void {
    const delay = this.#options.bootRetryMs ?? 30_000;
    this.#status = { ...this.#status, state: "connecting", detail: `Slack unreachable: ${slackErrorCode(err)}` };
    this.#logger.warn({ error: slackErrorCode(err), retryInMs: delay }, "team chat could not reach Slack; retrying");
    if (this.#closed) return;
    this.#bootTimer = setTimeout(() => void this.#boot(), delay);
    this.#bootTimer.unref();
  }

  async #connect(identity: SlackIdentity, expectedSocketAppId: string): Promise<void> {
    const env = this.#deps.config.env;
    const socket = createSocketClient(this.#appToken, env.CHAT_API_URL, this.#logger, this.#options);
    this.#socket = socket;
    // The SDK resolves start() on `hello` without its payload: the raw frame carries the app id.
    socket.on("ws_message", (data: unknown) => this.#onFrame(data, expectedSocketAppId));
    socket.on("slack_event", (event: { ack: () => Promise<void>; type: string; body: unknown }) =>
      this.#onEnvelope(event),
    );
    socket.on("reconnecting", () => {
      if (this.#status.state !== "disabled")
        this.#status = { ...this.#status, state: "connecting", detail: "reconnecting" };
    });
    socket.on("connected", () => {
      if (this.#status.state !== "disabled") this.#status = { ...this.#status, state: "connected", detail: null };
    });
    try {
      await socket.start();
    } catch (err) {
      if (this.#status.state === "disabled" || this.#closed) return;
      if (!isAuthError(err)) {
        // Slack could not be reached for a socket URL: the whole boot is tried again later.
        await socket.disconnect().catch(() => {});
        this.#socket = undefined;
        this.#retryBoot(err);
        return;
      }
      const code = slackErrorCode(err);
      this.#disable(code, `team chat disabled: CHAT_APP_TOKEN was refused by apps.connections.open (${code})`);
      return;
    }
    if (this.#status.state === "disabled") return;
    this.#logger.info(
      { botUserId: identity.botUserId, appId: identity.appId, mode: this.mode() },
      "team chat connected",
    );
    const owner = await this.ownerId().catch(() => null);
    this.#deps.telemetry.emit("team_chat.connected", {
      "team_chat.mode": this.mode(),
      "team_chat.owner_paired": owner !== null,
    });
    await this.#announcePairing();
  }

  #onFrame(data: unknown, expectedAppId: string): void {
    let frame: { type?: string; reason?: string; connection_info?: { app_id?: string } };
    try {
      frame = JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data as ArrayBuffer));
    } catch {
      return;
    }
    if (frame.type === "hello") {
      const socketAppId = frame.connection_info?.app_id;
      if (socketAppId && socketAppId !== expectedAppId) {
        const source = this.#deps.config.env.CHAT_EXPECTED_APP_ID ? "CHAT_EXPECTED_APP_ID" : "the bot token's app id";
        this.#disable(
          "app id mismatch",
          `team chat disabled: app id mismatch: ${source} is ${expectedAppId} but CHAT_APP_TOKEN belongs to app ${socketAppId}`,
          { expectedAppId, socketAppId },
        );
      }
    } else if (frame.type === "disconnect" && frame.reason === "link_disabled") {
      // Socket Mode was turned off for the app: reconnecting cannot succeed until it is on again.
      this.#disable("socket mode disabled for the app (link_disabled)", "team chat disabled: Slack sent link_disabled");
    } else if (frame.type === "disconnect") {
      this.#logger.info({ reason: frame.reason }, "team chat reconnecting at Slack's request");
    }
  }

  /** Acks first (Slack wants it within 3 s, before any work), then hands the event on. */
  #onEnvelope(event: { ack: () => Promise<void>; type: string; body: unknown }): void {
    event.ack().catch((err) => this.#logger.warn({ error: slackErrorCode(err) }, "team chat ack failed"));
    if (this.#status.state === "disabled" || event.type !== "events_api") return;
    // After the I/O phase: the acks of every frame read together go out before any event's work.
    setImmediate(() => this.#inbound?.accept(event.body as Parameters<SlackInbound["accept"]>[0]));
  }

  async #announcePairing(): Promise<void> {
    const db = this.#deps.database.db;
    if (this.#deps.config.env.CHAT_OWNER_ID || (await pairedOwner(db))) return;
    const code = await newPairingCode(db);
    this.#logger.warn(
      { pairingCode: code },
      `team chat has no owner: send the bot this one-time code by DM to become its owner: ${code}`,
    );
  }

  async ownerReset(): Promise<void> {
    await this.#announcePairing();
  }

  async ownerId(): Promise<string | null> {
    return this.#deps.config.env.CHAT_OWNER_ID ?? (await pairedOwner(this.#deps.database.db));
  }

  async ownerDirectMessage(): Promise<TeamChatDestination | null> {
    if (this.#status.state === "disabled") return null;
    const owner = await this.ownerId();
    if (!owner) return null;
    const db = this.#deps.database.db;
    const cached = await cachedOwnerDm(db, owner);
    if (cached) return { id: cached, kind: "dm" };
    // Slack refusing or not answering leaves team chat out of this delivery; it never fails it
    // (the web chat still gets its copy, a deliver-only webhook still gets its answer).
    const opened = await this.web.conversations.open({ users: owner }).catch((err: unknown) => {
      this.#logger.warn(
        { error: slackErrorCode(err) },
        "team chat could not open the owner's DM; delivering without it",
      );
      return undefined;
    });
    const id = opened?.channel?.id;
    if (!id) return null;
    await cacheOwnerDm(db, owner, id);
    return { id, kind: "dm" };
  }

  async linkedChannels(): Promise<LinkedChannel[]> {
    if (this.#status.state === "disabled") return [];
    return (await listChannels(this.#deps.database.db)).map(toLinkedChannel);
  }

  deliversTo(channelId: string): boolean {
    return this.channels.delivers(channelId);
  }

  async channelToLink(channelId: string): Promise<{ name: string | null; refused: string | null }> {
    // A failed lookup leaves the name and the sharing unknown: the allow-list still applies.
    const info = await this.web.conversations.info({ channel: channelId }).catch(() => undefined);
    return {
      name: info?.channel?.name ?? null,
      refused: this.channels.refusal(channelId, externallyShared(info?.channel)),
    };
  }

  /** A delivery (webhook, heartbeat, schedule): bounded, stored, posted, retried later if Slack refuses. */
  async post(destination: TeamChatDestination, text: string): Promise<void> {
    await this.outbox.send(destination.id, null, boundDelivery(text));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#bootTimer);
    clearInterval(this.#pruneTimer);
    await this.#socket?.disconnect().catch(() => {});
    this.#inbound?.stop();
    await this.#inbound?.idle();
    await this.outbox.stop();
  }
}
