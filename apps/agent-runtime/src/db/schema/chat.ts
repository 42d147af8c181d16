import type { Generated } from "kysely";

export type ThreadKind = "web" | "team-chat" | "webhook" | "heartbeat" | "schedule";

export interface ThreadTable {
  id: string;
  kind: ThreadKind;
  title: string;
  is_main: number;
  /** The team-chat destination (DM or channel id) a team-chat thread belongs to. */
  external_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface MessageTable {
  /** Insertion order within the database; messages of a thread are read in this order. */
  seq: Generated<number>;
  id: string;
  thread_id: string;
  role: "user" | "assistant";
  /** JSON array of Messages API content blocks (text, tool_use, tool_result). */
  content: string;
  /** The text blocks joined; empty for pure tool steps. */
  text: string;
  /** 1 when the step is stored but was not delivered (verbose off, tool steps). */
  internal: number;
  source: string;
  created_at: string;
}

/** The model's view of a thread after compaction, and the last measured context occupancy. */
export interface ThreadContextTable {
  thread_id: string;
  /** The one rolling summary; null before the first compaction. */
  summary: string | null;
  /** Messages with seq <= through_seq are represented by the summary (they stay stored). */
  through_seq: number;
  compactions: number;
  /** Input + output tokens of the last model call of the last turn. */
  context_tokens: number | null;
  model_id: string | null;
  updated_at: string;
}
