import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "../http.ts";
import type { SlackMessage, SlackWorkspace } from "./workspace.ts";

export interface RecordedCall {
  method: string;
  params: Record<string, string>;
  /** Which token was presented: `bot`, `app`, `other` or null (none). */
  token: "bot" | "app" | "other" | null;
  at: number;
}

export interface WebApiIdentity {
  botToken: string;
  appToken: string;
  teamId: string;
  botId: string;
  botUserId: string;
  /** The app id bots.info reports for the bot token. */
  botAppId: string;
}

type Json = Record<string, unknown>;
type Handler = (params: Record<string, string>, token: RecordedCall["token"]) => Json;

/** Form-encoded (what the official WebClient sends) or JSON bodies; nested values arrive JSON-encoded. */
function parseParams(raw: string, contentType: string | undefined): Record<string, string> {
  if (contentType?.includes("application/json") && raw) {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(parsed).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
    );
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

function page<T>(items: T[], params: Record<string, string>, fallbackLimit: number, maxPage: number) {
  const offset = params.cursor ? Number(Buffer.from(params.cursor, "base64").toString("utf8")) : 0;
  // Slack may return fewer items than `limit`: clients must follow next_cursor.
  const limit = Math.max(1, Math.min(Number(params.limit) || fallbackLimit, maxPage));
  const slice = items.slice(offset, offset + limit);
  const next = offset + limit < items.length ? Buffer.from(String(offset + limit)).toString("base64") : "";
  return { slice, has_more: next !== "", response_metadata: { next_cursor: next } };
}

/**
 * The Web API methods the team-chat adapter calls, answering as Slack does: HTTP 200 with
 * `{ok:false,error}` for failures, HTTP 429 with `Retry-After` when rate limited.
 */
export class SlackWebApi {
  readonly calls: RecordedCall[] = [];
  readonly reactions: Array<{ channel: string; timestamp: string; name: string }> = [];
  readonly #failures = new Map<string, Array<{ error?: string; retryAfter?: number; status?: number }>>();
  readonly #identity: WebApiIdentity;
  readonly #handlers: Record<string, Handler>;
  /** While set, every call answers HTTP 503 (Slack unreachable for the client). */
  down = false;
  /** The most items one page of a paginated method returns, whatever `limit` asks. */
  maxPageSize = 1000;
  /** Called after chat.postMessage stored a message (tests wait on replies). */
  onPosted?: (channel: string, message: SlackMessage) => void;

  constructor(workspace: SlackWorkspace, identity: WebApiIdentity, connectUrl: () => string) {
    this.#identity = identity;
    const ws = workspace;
    const bot = () => ({ user: identity.botUserId, bot_id: identity.botId });
    const channelOf = (params: Record<string, string>) => {
      const conversation = ws.conversation(params.channel ?? "");
      if (!conversation) throw new SlackApiError("channel_not_found");
      return conversation;
    };
    this.#handlers = {
      "auth.test": () => ({
        url: "https://standin.slack.test/",
        team: "Stand-in",
        user: "agent",
        team_id: identity.teamId,
        user_id: identity.botUserId,
        bot_id: identity.botId,
        is_enterprise_install: false,
      }),
      "bots.info": (p) => {
        if (p.bot !== identity.botId) throw new SlackApiError("bot_not_found");
        return {
          bot: {
            id: identity.botId,
            deleted: false,
            name: "agent",
            app_id: identity.botAppId,
            user_id: identity.botUserId,
          },
        };
      },
      "apps.connections.open": () => ({ url: connectUrl() }),
      "chat.postMessage": (p) => {
        const conversation = channelOf(p);
        if (!p.text) throw new SlackApiError("no_text");
        const message = ws.add(conversation.id, {
          ...bot(),
          text: p.text,
          ...(p.thread_ts ? { thread_ts: p.thread_ts } : {}),
        });
        this.onPosted?.(conversation.id, message);
        return { channel: conversation.id, ts: message.ts, message };
      },
      "chat.update": (p) => {
        const conversation = channelOf(p);
        const message = ws.find(conversation.id, p.ts ?? "");
        if (!message) throw new SlackApiError("message_not_found");
        if (message.bot_id !== identity.botId) throw new SlackApiError("cant_update_message");
        message.text = p.text ?? "";
        this.onPosted?.(conversation.id, message);
        return { channel: conversation.id, ts: message.ts, text: message.text };
      },
      "conversations.open": (p) => {
        const user = (p.users ?? "").split(",")[0] ?? "";
        if (!ws.users.has(user)) throw new SlackApiError("user_not_found");
        return { channel: { id: ws.dm(user).id } };
      },
      "conversations.replies": (p) => {
        const conversation = channelOf(p);
        const thread = ws.replies(conversation.id, p.ts ?? "");
        if (thread.length === 0) throw new SlackApiError("thread_not_found");
        const { slice, ...rest } = page(thread, p, 1000, this.maxPageSize);
        return { messages: slice, ...rest };
      },
      "conversations.history": (p) => {
        const conversation = channelOf(p);
        const { slice, ...rest } = page(ws.history(conversation.id), p, 100, this.maxPageSize);
        return { messages: slice, ...rest };
      },
      "conversations.info": (p) => {
        const c = channelOf(p);
        return {
          channel: {
            id: c.id,
            name: c.name,
            is_channel: !c.is_im,
            is_im: c.is_im,
            is_member: true,
            user: c.user,
            is_shared: Boolean(c.is_ext_shared),
            is_ext_shared: Boolean(c.is_ext_shared),
          },
        };
      },
      "conversations.members": (p) => {
        const { slice, ...rest } = page(channelOf(p).members, p, 100, this.maxPageSize);
        return { members: slice, ...rest };
      },
      "users.info": (p) => {
        const user = ws.users.get(p.user ?? "");
        if (!user) throw new SlackApiError("user_not_found");
        return { user: { ...user, profile: { display_name: user.name, real_name: user.real_name } } };
      },
      "reactions.add": (p) => {
        const conversation = channelOf(p);
        if (!ws.find(conversation.id, p.timestamp ?? "")) throw new SlackApiError("message_not_found");
        this.reactions.push({ channel: conversation.id, timestamp: p.timestamp ?? "", name: p.name ?? "" });
        return {};
      },
      "reactions.remove": (p) => {
        const conversation = channelOf(p);
        const at = this.reactions.findIndex(
          (r) => r.channel === conversation.id && r.timestamp === p.timestamp && r.name === p.name,
        );
        if (at < 0) throw new SlackApiError("no_reaction");
        this.reactions.splice(at, 1);
        return {};
      },
    };
  }

  /** The next `times` calls of `method` answer `{ok:false,error}`. */
  failNext(method: string, error: string, times = 1): void {
    this.#queue(method, { error }, times);
  }

  /** The next `times` calls of `method` answer HTTP 503, as an unreachable Slack would. */
  unavailableNext(method: string, times = 1): void {
    this.#queue(method, { status: 503 }, times);
  }

  /** The next `times` calls of `method` answer HTTP 429 with `Retry-After: seconds`. */
  rateLimitNext(method: string, retryAfterSeconds: number, times = 1): void {
    this.#queue(method, { retryAfter: retryAfterSeconds }, times);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  #queue(method: string, failure: { error?: string; retryAfter?: number; status?: number }, times: number): void {
    const list = this.#failures.get(method) ?? [];
    for (let i = 0; i < times; i++) list.push(failure);
    this.#failures.set(method, list);
  }

  #tokenKind(req: IncomingMessage, params: Record<string, string>): RecordedCall["token"] {
    const header = req.headers.authorization;
    const token = header?.startsWith("Bearer ") ? header.slice(7) : params.token;
    if (!token) return null;
    if (token === this.#identity.botToken) return "bot";
    if (token === this.#identity.appToken) return "app";
    return "other";
  }

  async handle(req: IncomingMessage, res: ServerResponse, method: string): Promise<void> {
    const params = parseParams(await readBody(req), req.headers["content-type"]);
    const token = this.#tokenKind(req, params);
    delete params.token;
    this.calls.push({ method, params, token, at: Date.now() });
    const reply = (status: number, body: Json, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
      res.end(JSON.stringify(body));
    };
    if (this.down) return reply(503, { ok: false, error: "service_unavailable" });
    const failure = this.#failures.get(method)?.shift();
    if (failure?.retryAfter !== undefined) {
      reply(429, { ok: false, error: "ratelimited" }, { "retry-after": String(failure.retryAfter) });
      return;
    }
    if (failure?.status) return reply(failure.status, { ok: false, error: "service_unavailable" });
    if (failure?.error) return reply(200, { ok: false, error: failure.error });
    const handler = this.#handlers[method];
    if (!handler) return reply(200, { ok: false, error: "unknown_method" });
    if (token === null) return reply(200, { ok: false, error: "not_authed" });
    // App-level tokens open socket connections; everything else takes the bot token.
    const wanted = method === "apps.connections.open" ? "app" : "bot";
    if (token !== wanted)
      return reply(200, { ok: false, error: token === "other" ? "invalid_auth" : "not_allowed_token_type" });
    try {
      reply(200, { ok: true, ...handler(params, token) });
    } catch (err) {
      if (err instanceof SlackApiError) reply(200, { ok: false, error: err.code });
      else throw err;
    }
  }
}

export class SlackApiError extends Error {
  readonly code: string;
  constructor(code: string) {
    super(code);
    this.code = code;
  }
}
