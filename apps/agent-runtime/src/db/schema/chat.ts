import type { Generated } from "kysely";

export type ThreadKind = "web" | "team-chat" | "webhook";

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
