/** A channel linked to the agent (team mode): by inviting the bot, or from the channels view. */
export interface TeamChatChannelTable {
  channel_id: string;
  name: string | null;
  linked_at: string;
  /** 0 or 1; at most one channel is flagged. */
  is_main: number;
}

export interface TeamChatEventTable {
  event_id: string;
  received_at: string;
}

/** `failed`: given up (Slack refused it for good, or for a day); kept a week for the record. */
export type TeamChatDeliveryStatus = "pending" | "sent" | "failed";

/** One outbound post (all of its chunks); `chunks_sent` makes a retry resume instead of repeat. */
export interface TeamChatDeliveryTable {
  id: string;
  channel_id: string;
  thread_ts: string | null;
  text: string;
  chunks_sent: number;
  attempts: number;
  status: TeamChatDeliveryStatus;
  last_error: string | null;
  next_attempt_at: string;
  created_at: string;
}
