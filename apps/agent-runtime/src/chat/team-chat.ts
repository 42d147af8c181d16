export interface TeamChatDestination {
  id: string;
  kind: "dm" | "channel";
}

export interface LinkedChannel extends TeamChatDestination {
  kind: "channel";
  /** When the channel was linked to the agent (ISO 8601); the oldest is the team-mode fallback. */
  linkedAt: string;
  /** Flagged as the agent's main channel on the channels view. */
  main: boolean;
}

/** Where a team-chat integration stands (the channels view and `/health` show it). */
export interface TeamChatStatus {
  state: "connecting" | "connected" | "disabled";
  /** Why it is disabled (`app id mismatch`, `invalid_auth`, …) or reconnecting; null otherwise. */
  detail: string | null;
  appId: string | null;
  botUserId: string | null;
}

/**
 * What the runtime needs from a team-chat integration: the Slack adapter (chat/slack/) in
 * production; tests of the delivery paths also use the in-process adapter below.
 */
export interface TeamChatAdapter {
  /** personal: the agent talks to its owner in a DM; team: it lives in channels. */
  mode(): "personal" | "team";
  ownerDirectMessage(): Promise<TeamChatDestination | null>;
  linkedChannels(): Promise<LinkedChannel[]>;
  post(destination: TeamChatDestination, text: string): Promise<void>;
  status?(): TeamChatStatus;
  /** The paired owner was forgotten: a new pairing code is issued (and logged). */
  ownerReset?(): Promise<void>;
  /**
   * Whether deliveries may go to a linked channel (team chat's channel allow-list); every linked
   * channel when absent.
   */
  deliversTo?(channelId: string): boolean;
  /**
   * A channel the channels view is to link: its display name when the integration can look it up,
   * and why it may not be linked (team chat's channel allow-list), or null when it may.
   */
  channelToLink?(channelId: string): Promise<{ name: string | null; refused: string | null }>;
}

/**
 * Where a team-chat delivery goes (spec "Delivery targets"): the owner's DM in personal mode; in
 * team mode the flagged main channel, else the oldest linked channel; null when nothing is linked.
 * Channels the integration does not deliver to (not on its allow-list) are passed over.
 */
export async function selectTeamChatDestination(adapter: TeamChatAdapter): Promise<TeamChatDestination | null> {
  if (adapter.mode() === "personal") return adapter.ownerDirectMessage();
  const channels = (await adapter.linkedChannels()).filter((c) => adapter.deliversTo?.(c.id) ?? true);
  const main = channels.find((c) => c.main);
  if (main) return { id: main.id, kind: "channel" };
  const oldest = [...channels].sort((a, b) => a.linkedAt.localeCompare(b.linkedAt))[0];
  return oldest ? { id: oldest.id, kind: "channel" } : null;
}

export interface PostedTeamChatMessage {
  destination: TeamChatDestination;
  text: string;
}

/** A team chat that lives in memory: for tests and for running without a chat integration. */
export class InProcessTeamChat implements TeamChatAdapter {
  readonly posted: PostedTeamChatMessage[] = [];
  currentMode: "personal" | "team";
  ownerDm: TeamChatDestination | null;
  channels: LinkedChannel[];

  constructor(
    init: { mode?: "personal" | "team"; ownerDm?: TeamChatDestination | null; channels?: LinkedChannel[] } = {},
  ) {
    this.currentMode = init.mode ?? "personal";
    this.ownerDm = init.ownerDm ?? null;
    this.channels = init.channels ?? [];
  }

  mode(): "personal" | "team" {
    return this.currentMode;
  }

  async ownerDirectMessage(): Promise<TeamChatDestination | null> {
    return this.ownerDm;
  }

  async linkedChannels(): Promise<LinkedChannel[]> {
    return this.channels;
  }

  async post(destination: TeamChatDestination, text: string): Promise<void> {
    this.posted.push({ destination, text });
  }
}
