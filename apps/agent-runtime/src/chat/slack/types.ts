import type { WebClient } from "@slack/web-api";
import type { ChannelGuard } from "./channel-guard.ts";
import type { SlackOutbox } from "./outbox.ts";

/** A bot that belongs to the app: what boot resolved from the bot token. */
export interface SlackIdentity {
  botUserId: string;
  botId: string;
  appId: string;
}

/** What the inbound side asks of the adapter (`SlackTeamChat` in adapter.ts implements it). */
export interface SlackChat {
  readonly web: WebClient;
  readonly outbox: SlackOutbox;
  /** Which channels team mode links, answers in and delivers to. */
  readonly channels: ChannelGuard;
  mode(): "personal" | "team";
  ownerId(): Promise<string | null>;
}
