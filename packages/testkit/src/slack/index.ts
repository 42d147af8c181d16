import { randomUUID } from "node:crypto";
import { type WebSocket, WebSocketServer } from "ws";
import { type LocalServer, startLocalServer } from "../http.ts";
import { type RecordedCall, SlackWebApi } from "./web-api.ts";
import { type SlackFile, type SlackMessage, SlackWorkspace } from "./workspace.ts";

export type { RecordedCall, SlackFile, SlackMessage };
export { SlackWorkspace };

export interface SlackStandInOptions {
  botToken?: string;
  appToken?: string;
  /** The app id of the bot token (bots.info). */
  botAppId?: string;
  /** The app id of the app token (the socket's `hello`); defaults to botAppId. */
  socketAppId?: string;
  botUserId?: string;
  botId?: string;
  teamId?: string;
  /** Server pings after the one that follows `hello`; 0 sends only that one. */
  pingIntervalMs?: number;
}

export interface Envelope {
  envelopeId: string;
  type: string;
  sentAt: number;
  /** When the client acknowledged it (performance.now()), or undefined. */
  ackedAt?: number;
  ackPayload?: unknown;
}

/**
 * A local Slack: the Web API over HTTP and Socket Mode over a WebSocket, on port 0. The official
 * `@slack/web-api` and `@slack/socket-mode` clients run against it unchanged (point the WebClient's
 * `slackApiUrl` at `apiUrl`; the socket URL comes from apps.connections.open).
 */
export class SlackStandIn {
  readonly workspace = new SlackWorkspace();
  readonly api: SlackWebApi;
  readonly envelopes = new Map<string, Envelope>();
  /** Every `hello` sent: one per (re)connection. */
  connections = 0;
  botToken: string;
  appToken: string;
  botUserId: string;
  botId: string;
  socketAppId: string;
  #server: LocalServer | undefined;
  #wss: WebSocketServer | undefined;
  #socket: WebSocket | undefined;
  #pinging = true;
  #pingTimer: NodeJS.Timeout | undefined;
  #eventSeq = 0;
  readonly #events = new Map<string, Record<string, unknown>>();
  readonly #pingIntervalMs: number;

  constructor(options: SlackStandInOptions = {}) {
    this.botToken = options.botToken ?? "xoxb-standin-bot-token";
    this.appToken = options.appToken ?? "xapp-standin-app-token";
    this.botUserId = options.botUserId ?? "U0AGENT";
    this.botId = options.botId ?? "B0AGENT";
    const botAppId = options.botAppId ?? "A0AGENT";
    this.socketAppId = options.socketAppId ?? botAppId;
    this.#pingIntervalMs = options.pingIntervalMs ?? 10_000;
    this.workspace.addUser(this.botUserId, "agent", true);
    this.api = new SlackWebApi(
      this.workspace,
      {
        botToken: this.botToken,
        appToken: this.appToken,
        teamId: options.teamId ?? "T0STANDIN",
        botId: this.botId,
        botUserId: this.botUserId,
        botAppId,
      },
      () => `${this.url.replace("http", "ws")}/link/?ticket=${randomUUID()}`,
    );
  }

  async start(): Promise<this> {
    const server = await startLocalServer(async (req, res) => {
      const match = /^\/api\/([a-zA-Z.]+)$/.exec(req.url?.split("?")[0] ?? "");
      if (req.method !== "POST" || !match?.[1]) {
        res.writeHead(404).end();
        return;
      }
      await this.api.handle(req, res, match[1]);
    });
    this.#server = server;
    this.#wss = new WebSocketServer({ server: server.server, path: "/link/" });
    this.#wss.on("connection", (socket) => this.#accept(socket));
    return this;
  }

  get url(): string {
    if (!this.#server) throw new Error("stand-in not started");
    return this.#server.url;
  }

  /** What CHAT_API_URL (the WebClient's slackApiUrl) is set to. */
  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  get connected(): boolean {
    return this.#socket?.readyState === 1;
  }

  #accept(socket: WebSocket): void {
    // One live connection, as a single-connection app has: a new one replaces the old.
    this.#socket = socket;
    this.connections += 1;
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
      const envelope = frame.envelope_id ? this.envelopes.get(frame.envelope_id) : undefined;
      if (envelope && envelope.ackedAt === undefined) {
        envelope.ackedAt = performance.now();
        envelope.ackPayload = frame.payload;
      }
    });
    socket.on("close", () => {
      if (this.#socket === socket) this.#socket = undefined;
    });
    socket.send(
      JSON.stringify({
        type: "hello",
        num_connections: 1,
        debug_info: { host: "standin-1", build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: this.socketAppId },
      }),
    );
    if (this.#pinging) socket.ping("standin");
    clearInterval(this.#pingTimer);
    if (this.#pingIntervalMs > 0) {
      this.#pingTimer = setInterval(() => {
        if (this.#pinging && this.#socket?.readyState === 1) this.#socket.ping("standin");
      }, this.#pingIntervalMs);
      this.#pingTimer.unref();
    }
  }

  /** Stops sending server pings (the client's server-ping timeout then reconnects). */
  stopPinging(): void {
    this.#pinging = false;
  }

  /** One server ping now. */
  ping(): void {
    this.#socket?.ping("standin");
  }

  /** Sends a raw frame on the live socket. */
  sendFrame(frame: Record<string, unknown>): void {
    const socket = this.#socket;
    if (socket?.readyState !== 1) throw new Error("no live socket connection");
    socket.send(JSON.stringify(frame));
  }

  /** Sends an envelope (`events_api` unless `type` says otherwise) and returns its id. */
  sendEnvelope(type: string, payload: Record<string, unknown>, envelopeId: string = randomUUID()): string {
    this.envelopes.set(envelopeId, { envelopeId, type, sentAt: performance.now() });
    this.sendFrame({ envelope_id: envelopeId, type, payload, accepts_response_payload: false, retry_attempt: 0 });
    return envelopeId;
  }

  /** Wraps an event as the Events API does and sends it; the same eventId twice is a redelivery. */
  sendEvent(event: Record<string, unknown>, eventId = `Ev${(++this.#eventSeq).toString().padStart(8, "0")}`) {
    this.#events.set(eventId, event);
    const channel = typeof event.channel === "string" ? this.workspace.conversation(event.channel) : undefined;
    const envelopeId = this.sendEnvelope("events_api", {
      token: "verification-token",
      team_id: "T0STANDIN",
      api_app_id: this.socketAppId,
      type: "event_callback",
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
      is_ext_shared_channel: Boolean(channel?.is_ext_shared),
      event,
    });
    return { eventId, envelopeId };
  }

  /** Sends an event again under its event id, in a new envelope (Slack's at-least-once redelivery). */
  redeliver(eventId: string) {
    const event = this.#events.get(eventId);
    if (!event) throw new Error(`no event ${eventId}`);
    return this.sendEvent(event, eventId);
  }

  /**
   * A person writes: the message is stored (history shows it) and its `message` event is sent.
   * DMs go to the user's DM with the bot; `channel` names a channel instead.
   */
  say(user: string, text: string, options: { channel?: string; threadTs?: string; files?: SlackFile[] } = {}) {
    const channel = options.channel ?? this.workspace.dm(user).id;
    const isIm = this.workspace.conversation(channel)?.is_im ?? false;
    const message = this.workspace.add(channel, {
      user,
      text,
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
      ...(options.files ? { files: options.files } : {}),
    });
    const sent = this.sendEvent({
      ...message,
      channel,
      channel_type: isIm ? "im" : "channel",
      event_ts: message.ts,
    });
    return { ...sent, ts: message.ts, channel };
  }

  /** A person mentions the bot in a channel: stored, and sent as an `app_mention` event. */
  mention(user: string, channel: string, text: string, threadTs?: string) {
    const message = this.workspace.add(channel, {
      user,
      text: `<@${this.botUserId}> ${text}`,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
    const sent = this.sendEvent({ ...message, type: "app_mention", channel, event_ts: message.ts });
    return { ...sent, ts: message.ts, channel };
  }

  /** The bot was added to a channel. */
  inviteBot(channel: string, inviter: string) {
    this.workspace.conversation(channel)?.members.push(this.botUserId);
    return this.sendEvent({
      type: "member_joined_channel",
      user: this.botUserId,
      channel,
      channel_type: "C",
      team: "T0STANDIN",
      inviter,
      event_ts: this.workspace.nextTs(),
    });
  }

  /** A `disconnect` frame, as Slack sends before recycling a connection (`refresh_requested`, `warning`, …). */
  disconnect(reason: "refresh_requested" | "warning" | "link_disabled" | "too_many_websockets"): void {
    this.sendFrame({ type: "disconnect", reason, debug_info: { host: "standin-1" } });
  }

  /** Kills the TCP connection without a close handshake. */
  dropSocket(): void {
    this.#socket?.terminate();
  }

  /** Messages the bot posted in a conversation (a thread's replies included), oldest first. */
  botMessages(channel: string): SlackMessage[] {
    return (this.workspace.conversation(channel)?.messages ?? []).filter((m) => m.bot_id === this.botId);
  }

  /** Seconds from sending to ack, for every acked envelope. */
  ackLatenciesMs(): number[] {
    return [...this.envelopes.values()]
      .filter((e) => e.ackedAt !== undefined)
      .map((e) => (e.ackedAt as number) - e.sentAt);
  }

  async close(): Promise<void> {
    clearInterval(this.#pingTimer);
    for (const client of this.#wss?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (this.#wss ? this.#wss.close(() => resolve()) : resolve()));
    await this.#server?.close();
  }
}

export async function startSlackStandIn(options: SlackStandInOptions = {}): Promise<SlackStandIn> {
  return new SlackStandIn(options).start();
}
