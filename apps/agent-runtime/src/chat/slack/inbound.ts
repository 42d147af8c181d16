import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { Logger } from "pino";
import type { RuntimeDeps } from "../../deps.ts";
import { runAgentTurn } from "../../services/agent-turns.ts";
import { teamChatThread } from "../../services/threads.ts";
import { historyOf } from "../../turns/run-turn.ts";
import {
  cacheOwnerDm,
  firstSighting,
  isLinked,
  linkChannel,
  newPairingCode,
  pairingCode,
  pairOwner,
  unlinkChannel,
} from "../store.ts";
import { BotTurnGuard } from "./bot-turns.ts";
import { externallyShared } from "./channel-guard.ts";
import { slackErrorCode } from "./clients.ts";
import { slackText } from "./escape.ts";
import {
  channelLabelNote,
  historyFromSlack,
  inboundText,
  joinHistory,
  personLabel,
  readSlackHistory,
  type SlackConversationRef,
  type SlackHistoryMessage,
  WORKING_STATUS,
} from "./history.ts";
import { StrangerRefusals } from "./strangers.ts";
import type { SlackChat, SlackIdentity } from "./types.ts";

/** The source stored on team-chat turns. */
export const TEAM_CHAT_SOURCE = "team-chat";
/** Status updates while a turn runs are at most this often (chat.update is rate limited). */
const STATUS_UPDATE_MS = 1000;

export interface SlackEventBody {
  event_id?: string;
  /** The app the event is for: the bot's own, or the event is not for this runtime. */
  api_app_id?: string;
  /** The event happened in a channel shared with another organization (Slack Connect). */
  is_ext_shared_channel?: boolean;
  event?: SlackEvent;
}

interface SlackEvent extends SlackHistoryMessage {
  type: string;
  channel?: string;
  channel_type?: string;
  thread_ts?: string;
  user?: string;
}

/** Wrong pairing codes after which the code is replaced by a new one. */
export const MAX_WRONG_PAIRING_CODES = 10;

/**
 * Turns one person may have waiting or running at once in channels. In a linked channel every
 * message is a turn, each top-level one in a conversation of its own: a member pasting a hundred
 * messages was a hundred turns at once. Past it, that person's channel messages are dropped
 * (logged) until one ends. A DM (the owner's) is one conversation whose turns run in order.
 */
export const MAX_PENDING_TURNS_PER_PERSON = 5;
/** Turns that run at once over every conversation; the others wait their turn. */
export const MAX_CONCURRENT_TURNS = 4;

/** People whose wrong pairing codes are counted; past it the counts start over. */
const PAIRING_PEOPLE_LIMIT = 10_000;

/**
 * Events saying the bot can no longer post in a channel: it left or was removed, or the channel was
 * archived or deleted (`member_left_channel` counts when the member is the bot).
 */
const GONE_EVENTS = new Set([
  "channel_left",
  "group_left",
  "channel_archive",
  "group_archive",
  "channel_deleted",
  "group_deleted",
]);

/** Message subtypes that are a person writing; the rest (edits, deletions, joins) are not turns. */
const TURN_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

/**
 * Inbound events: deduplicated on event_id, routed (owner DMs, mentions and threads in linked
 * channels, the bot's own joins), and run as turns one at a time per Slack conversation.
 */
export class SlackInbound {
  readonly #deps: RuntimeDeps;
  readonly #chat: SlackChat;
  readonly #identity: SlackIdentity;
  readonly #logger: Logger;
  /** The tail of each conversation's queue of turns. */
  readonly #queues = new Map<string, Promise<void>>();
  readonly #names = new Map<string, string>();
  readonly #botTurns: BotTurnGuard;
  /** Strangers told lately that the agent is someone else's: each is told once an hour. */
  readonly #strangers = new StrangerRefusals();
  /** Wrong pairing codes since the current one was issued. */
  #wrongCodes = 0;
  /** Wrong pairing codes per person, never reset while the runtime runs: each may guess a few times only. */
  readonly #wrongCodesBy = new Map<string, number>();
  /** Turns waiting or running, per person. */
  readonly #pendingBy = new Map<string, number>();
  /** Turns running, and the turns waiting for one of them to end. */
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  /** Turns finished (tests and the benchmark wait on it). */
  turnsFinished = 0;
  /** The runtime is stopping: turns not yet started are dropped, not run. */
  #stopping = false;

  constructor(deps: RuntimeDeps, chat: SlackChat, identity: SlackIdentity, logger: Logger) {
    this.#deps = deps;
    this.#chat = chat;
    this.#identity = identity;
    this.#logger = logger;
    this.#botTurns = new BotTurnGuard(deps.config.env.CHAT_BOT_TURNS_MAX);
  }

  accept(body: SlackEventBody | null): void {
    // Runs outside any request (from the socket's frame handler): a malformed body is dropped
    // here, before a throw could reach the process.
    const event = body?.event;
    if (typeof event !== "object" || event === null || typeof event.type !== "string") return;
    if (typeof body?.event_id !== "string" || !body.event_id) return;
    // Only the bot's own app's events: one for another app (a socket shared by mistake, an app
    // token of another app) would otherwise run turns as this agent.
    if (body.api_app_id !== undefined && body.api_app_id !== this.#identity.appId) {
      this.#logger.warn({ eventId: body.event_id, appId: body.api_app_id }, "team chat ignored another app's event");
      return;
    }
    // Slack delivers at least once: a redelivered event is acked (already) and dropped here.
    if (!firstSighting(this.#deps.database.sqlite, body.event_id)) return;
    void this.#route(event, body.is_ext_shared_channel === true).catch((err) =>
      this.#logger.error({ eventId: body.event_id, error: slackErrorCode(err) }, "team chat event failed"),
    );
  }

  /**
   * The runtime is stopping: the turns that run are finished, the ones waiting behind them are
   * dropped (logged). A stopping process has some seconds: a queue of turns, each a model call,
   * ran past them, and the tracing flush and the database close after it never came.
   */
  stop(): void {
    this.#stopping = true;
  }

  /** Resolves when every queued turn has finished (or been dropped, after `stop`). */
  async idle(): Promise<void> {
    while (this.#queues.size > 0) await Promise.allSettled([...this.#queues.values()]);
  }

  async #route(event: SlackEvent, extShared: boolean): Promise<void> {
    const team = this.#chat.mode() === "team";
    if (event.type === "member_joined_channel") {
      if (team && event.user === this.#identity.botUserId && event.channel) await this.#link(event.channel, extShared);
      return;
    }
    const gone =
      GONE_EVENTS.has(event.type) || (event.type === "member_left_channel" && event.user === this.#identity.botUserId);
    if (gone) {
      if (typeof event.channel === "string" && (await unlinkChannel(this.#deps.database.db, event.channel)))
        this.#logger.info(
          { channel: event.channel, event: event.type },
          "team chat unlinked a channel it can no longer post in",
        );
      return;
    }
    if (event.type !== "message" && event.type !== "app_mention") return;
    // Its own messages are never turns; other bots' only with CHAT_ALLOW_BOTS.
    if (event.bot_id === this.#identity.botId || event.user === this.#identity.botUserId) return;
    const fromBot = Boolean(event.bot_id) || event.subtype === "bot_message";
    const allowBots = this.#deps.config.env.CHAT_ALLOW_BOTS;
    if (fromBot && !allowBots) return;
    if (!(TURN_SUBTYPES.has(event.subtype) || (allowBots && event.subtype === "bot_message"))) return;
    if (!event.channel || !event.user) return;
    if (event.type === "message" && event.channel_type === "im") {
      // A bot is never the owner, and a refusal could start two bots answering each other.
      if (fromBot) return;
      await this.#direct(event as SlackEvent & { channel: string; user: string });
      return;
    }
    if (!team || !(await isLinked(this.#deps.database.db, event.channel))) return;
    // Linked before the allow-list changed, or shared since: still no turns there.
    if (!this.#chat.channels.allows(event.channel, extShared)) return;
    // In a linked channel every message is the agent's to answer: a mention, a plain message (the
    // answer opens a thread under it) or a reply in a thread. A mention also arrives as `message`;
    // only its `app_mention` runs the turn, so it runs once.
    const mentioned = (event.text ?? "").includes(`<@${this.#identity.botUserId}>`);
    if (event.type === "message" && mentioned) return;
    const conversation = event.thread_ts ? `${event.channel}:${event.thread_ts}` : event.channel;
    if (!fromBot) this.#botTurns.human(conversation);
    else if (!this.#botTurns.takeBotTurn(conversation)) {
      this.#logger.info(
        { channel: event.channel, threadTs: event.thread_ts ?? null, max: this.#deps.config.env.CHAT_BOT_TURNS_MAX },
        "team chat ignored a bot's message: CHAT_BOT_TURNS_MAX bot-triggered turns ran in a row here without a person's message",
      );
      return;
    }
    const threadTs = event.thread_ts ?? event.ts;
    this.#enqueue(event, { channel: event.channel, threadTs, isDm: false });
  }

  async #link(channel: string, extShared: boolean): Promise<void> {
    const info = await this.#chat.web.conversations.info({ channel }).catch(() => undefined);
    if (!this.#chat.channels.allows(channel, extShared || externallyShared(info?.channel))) return;
    const name = info?.channel?.name ?? null;
    await linkChannel(this.#deps.database.db, channel, name);
    this.#logger.info({ channel, name }, "team chat linked a channel the bot was invited to");
  }

  async #direct(event: SlackEvent & { channel: string; user: string }): Promise<void> {
    const owner = await this.#chat.ownerId();
    const reply = (text: string, markup = false) =>
      this.#chat.outbox.send(event.channel, event.thread_ts ?? null, text, { markup });
    if (!owner) {
      // A person past MAX_WRONG_PAIRING_CODES wrong tries is not heard again: retiring the code
      // alone would leave anyone unlimited guesses, ten at a time.
      const tries = this.#wrongCodesBy.get(event.user) ?? 0;
      if (tries >= MAX_WRONG_PAIRING_CODES) return;
      const code = await pairingCode(this.#deps.database.db);
      if (code && (event.text ?? "").trim() === code) {
        this.#wrongCodes = 0;
        await pairOwner(this.#deps.database.db, event.user);
        await cacheOwnerDm(this.#deps.database.db, event.user, event.channel);
        this.#logger.info({ owner: event.user }, "team chat paired with its owner");
        await reply("Paired: you are now my owner. Talk to me here.");
      } else {
        // Anyone in the workspace can DM the bot: a code is retired after a few wrong tries, so it
        // cannot be guessed by trying them all. The new one is logged like the first.
        if (this.#wrongCodesBy.size >= PAIRING_PEOPLE_LIMIT) this.#wrongCodesBy.clear();
        this.#wrongCodesBy.set(event.user, tries + 1);
        if (++this.#wrongCodes >= MAX_WRONG_PAIRING_CODES) {
          this.#wrongCodes = 0;
          this.#logger.warn({ attempts: MAX_WRONG_PAIRING_CODES }, "team chat pairing code retired after wrong tries");
          if (this.#deps.teamChat?.ownerReset) await this.#deps.teamChat.ownerReset();
          else await newPairingCode(this.#deps.database.db);
        }
        await reply("I am not paired with an owner yet. Send me the one-time pairing code from my runtime's log.");
      }
      return;
    }
    // Personal agent: another person gets one polite refusal an hour, and no turn runs; the rest
    // of a flood of their DMs is dropped, so the bot never posts a flood of refusals.
    if (event.user !== owner) {
      if (this.#strangers.take(event.user))
        await reply(`I am the personal agent of <@${owner}> and only take requests from them.`, true);
      else this.#logger.debug({ user: event.user }, "team chat dropped a stranger's DM: refused within the hour");
      return;
    }
    this.#enqueue(event, { channel: event.channel, threadTs: event.thread_ts ?? null, isDm: true });
  }

  #enqueue(event: SlackEvent, ref: SlackConversationRef): void {
    const key = ref.threadTs ? `${ref.channel}:${ref.threadTs}` : ref.channel;
    // A DM is one conversation with the owner, its turns one after another: only channels fan out.
    const person = ref.isDm ? null : (event.user ?? "");
    if (person !== null) {
      const pending = this.#pendingBy.get(person) ?? 0;
      if (pending >= MAX_PENDING_TURNS_PER_PERSON) {
        this.#logger.warn(
          { user: person, channel: ref.channel, max: MAX_PENDING_TURNS_PER_PERSON },
          "team chat dropped a message: this person already has the most turns waiting or running",
        );
        return;
      }
      this.#pendingBy.set(person, pending + 1);
    }
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.#slot(() => this.#turn(key, event, ref)))
      .catch((err) => this.#logger.error({ conversation: key, error: slackErrorCode(err) }, "team chat turn failed"))
      .finally(() => {
        this.turnsFinished += 1;
        if (person !== null) {
          const left = (this.#pendingBy.get(person) ?? 1) - 1;
          if (left > 0) this.#pendingBy.set(person, left);
          else this.#pendingBy.delete(person);
        }
        if (this.#queues.get(key) === next) this.#queues.delete(key);
      });
    this.#queues.set(key, next);
  }

  /** Runs `f` once fewer than MAX_CONCURRENT_TURNS turns run. */
  async #slot(f: () => Promise<void>): Promise<void> {
    if (this.#running >= MAX_CONCURRENT_TURNS) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running += 1;
    try {
      await f();
    } finally {
      // The slot passes straight to the next waiter, if any.
      const wake = this.#waiting.shift();
      if (wake) wake();
      else this.#running -= 1;
    }
  }

  async #loadNames(messages: SlackHistoryMessage[]): Promise<void> {
    for (const user of new Set(messages.map((m) => m.user).filter((u): u is string => Boolean(u)))) {
      if (this.#names.has(user)) continue;
      const info = await this.#chat.web.users.info({ user }).catch(() => undefined);
      this.#names.set(user, info?.user?.profile?.display_name || info?.user?.real_name || info?.user?.name || user);
    }
  }

  async #turn(key: string, event: SlackEvent, ref: SlackConversationRef): Promise<void> {
    if (this.#stopping) {
      this.#logger.warn({ conversation: key, user: event.user }, "team chat dropped a turn: the runtime is stopping");
      return;
    }
    const web = this.#chat.web;
    const deps = this.#deps;
    const replyThread = ref.isDm ? ref.threadTs : (ref.threadTs ?? event.ts);
    const thread = await teamChatThread(deps.database.db, key);
    // The working indication: a status message in the reply's place, updated in place with the
    // tool that runs, then replaced by the answer's first piece.
    const status = new WorkingStatus(web, ref.channel, replyThread, this.#logger);
    // Re-read now: what the model sees is Slack's conversation as it is, edits and deletions included.
    const slackMessages = await readSlackHistory(web, ref);
    if (!ref.isDm) await this.#loadNames(slackMessages);
    const owner = await this.#chat.ownerId().catch(() => null);
    const before = historyFromSlack(slackMessages, {
      botUserId: this.#identity.botUserId,
      botId: this.#identity.botId,
      beforeTs: event.ts,
      names: this.#names,
      ownerId: owner,
      isDm: ref.isDm,
      allowBots: deps.config.env.CHAT_ALLOW_BOTS,
    });
    const named = (text: string) =>
      ref.isDm ? text : `${personLabel(event.user ?? "unknown", this.#names, owner)}: ${text}`;
    const text = named(inboundText(event).replace(`<@${this.#identity.botUserId}>`, "").trim() || "(empty message)");
    // Only the owner's own messages may change the agent (its settings, its schedules).
    const manage = owner !== null && event.user === owner && !event.bot_id && event.subtype !== "bot_message";
    const startSeq = deps.messages.listAll(thread.id).at(-1)?.seq ?? 0;
    const buildHistory = (threadId: string): MessageParam[] =>
      joinHistory(before, historyOf(deps.messages.listAll(threadId).filter((r) => r.seq > startSeq)));
    // Steps are posted in order as they are delivered (verbose: every text step; else the last).
    let posting = Promise.resolve();
    const post = (answer: string) => {
      posting = posting.then(async () => {
        await this.#chat.outbox.send(ref.channel, replyThread, answer, { replaceTs: await status.take() });
      });
    };
    try {
      await runAgentTurn(deps, {
        threadId: thread.id,
        text,
        source: TEAM_CHAT_SOURCE,
        manage,
        teamMember: !manage,
        ...(ref.isDm ? {} : { systemNote: channelLabelNote(owner) }),
        buildHistory,
        onDelivered: (row) => post(row.text),
        onToolStart: (name) => status.update(`${WORKING_STATUS} running \`${name}\``),
      });
    } catch (err) {
      this.#logger.warn({ conversation: key, error: slackErrorCode(err) }, "team chat turn failed");
      post("Sorry, I could not answer this time: the model call failed. Please try again.");
    }
    await posting;
    await status.finish("_(no answer)_");
  }
}

/**
 * The bot's "working" message for one turn: posted at once (not through the outbox: a status is
 * not worth retrying), updated in place at most once a second, and handed to the first answer to
 * replace. A turn that delivers nothing leaves it saying so.
 */
class WorkingStatus {
  readonly #web: SlackChat["web"];
  readonly #channel: string;
  readonly #logger: Logger;
  readonly #posted: Promise<string | undefined>;
  #taken = false;
  #lastUpdate = 0;
  #updating: Promise<unknown> = Promise.resolve();

  constructor(web: SlackChat["web"], channel: string, threadTs: string | null, logger: Logger) {
    this.#web = web;
    this.#channel = channel;
    this.#logger = logger;
    this.#posted = web.chat
      .postMessage({ channel, text: WORKING_STATUS, ...(threadTs ? { thread_ts: threadTs } : {}) })
      .then((r) => r.ts)
      .catch((err) => {
        logger.debug({ error: slackErrorCode(err) }, "team chat could not post the working status");
        return undefined;
      });
  }

  update(text: string): void {
    const now = Date.now();
    if (this.#taken || now - this.#lastUpdate < STATUS_UPDATE_MS) return;
    this.#lastUpdate = now;
    this.#updating = this.#updating.then(async () => {
      const ts = await this.#posted;
      if (!ts || this.#taken) return;
      await this.#web.chat.update({ channel: this.#channel, ts, text: slackText(text) }).catch((err) => {
        this.#logger.debug({ error: slackErrorCode(err) }, "team chat could not update the working status");
      });
    });
  }

  /** The status message's ts for the first answer to replace (then undefined: later answers post). */
  async take(): Promise<string | undefined> {
    if (this.#taken) return undefined;
    this.#taken = true;
    await this.#updating;
    return this.#posted;
  }

  async finish(text: string): Promise<void> {
    const ts = await this.take();
    if (ts) await this.#web.chat.update({ channel: this.#channel, ts, text: slackText(text) }).catch(() => undefined);
  }
}
