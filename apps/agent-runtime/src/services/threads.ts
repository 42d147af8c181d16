import type { ChatMessage, Thread } from "@agentplane/contracts/runtime";
import { notFound } from "@agentplane/problem-details";
import type Database from "better-sqlite3";
import type { Kysely } from "kysely";
import type { MessageTable, RuntimeDatabase, ThreadTable } from "../db/schema/index.ts";
import { newId, nowIso } from "../ids.ts";

export type ThreadRow = ThreadTable;
export type MessageRow = Omit<MessageTable, "seq"> & { seq: number };

export function toThread(
  row: ThreadRow,
  context: { contextTokens: number | null; contextWindow: number | null } = {
    contextTokens: null,
    contextWindow: null,
  },
): Thread {
  return {
    id: row.id,
    title: row.title,
    main: row.is_main === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...context,
  };
}

export function toChatMessage(row: MessageRow): ChatMessage {
  return {
    id: row.id,
    threadId: row.thread_id,
    role: row.role,
    text: row.text,
    source: row.source,
    createdAt: row.created_at,
  };
}

/** Web threads only: team-chat and webhook threads are not listed (spec "Delivery targets"). */
export async function listWebThreads(db: Kysely<RuntimeDatabase>): Promise<ThreadRow[]> {
  return db
    .selectFrom("thread")
    .selectAll()
    .where("kind", "=", "web")
    .orderBy("is_main", "desc")
    .orderBy("updated_at", "desc")
    .execute();
}

/** The context each thread last used (tokens and model), by thread id. */
export async function threadContextUsage(
  db: Kysely<RuntimeDatabase>,
): Promise<Map<string, { contextTokens: number | null; modelId: string | null }>> {
  const rows = await db.selectFrom("thread_context").select(["thread_id", "context_tokens", "model_id"]).execute();
  return new Map(rows.map((r) => [r.thread_id, { contextTokens: r.context_tokens, modelId: r.model_id }]));
}

export async function createThread(
  db: Kysely<RuntimeDatabase>,
  input: { kind: ThreadRow["kind"]; title: string; externalId?: string },
): Promise<ThreadRow> {
  const now = nowIso();
  const row: ThreadRow = {
    id: newId("thr"),
    kind: input.kind,
    title: input.title,
    is_main: 0,
    external_id: input.externalId ?? null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto("thread").values(row).execute();
  return row;
}

export async function getWebThread(db: Kysely<RuntimeDatabase>, threadId: string): Promise<ThreadRow> {
  const row = await db
    .selectFrom("thread")
    .selectAll()
    .where("id", "=", threadId)
    .where("kind", "=", "web")
    .executeTakeFirst();
  if (!row) throw notFound("Thread", threadId);
  return row;
}

/** The conversation thread of one team-chat destination, created on first use. */
export async function teamChatThread(db: Kysely<RuntimeDatabase>, destinationId: string): Promise<ThreadRow> {
  const existing = await db
    .selectFrom("thread")
    .selectAll()
    .where("kind", "=", "team-chat")
    .where("external_id", "=", destinationId)
    .executeTakeFirst();
  return (
    existing ?? createThread(db, { kind: "team-chat", title: `Team chat ${destinationId}`, externalId: destinationId })
  );
}

export interface NewMessage {
  threadId: string;
  role: "user" | "assistant";
  content: unknown[];
  text: string;
  internal: boolean;
  source: string;
}

/**
 * The newest visible messages whose text fits in `budget` characters, oldest first; the newest
 * always, however long. Read newest first and stopped at the budget, so a thread grown without
 * bound (unsigned webhook deliveries, each up to a few MiB) is never read or answered whole.
 */
export function listRecentVisibleMessages(sqlite: Database.Database, threadId: string, budget: number): MessageRow[] {
  const rows: MessageRow[] = [];
  let used = 0;
  const newestFirst = sqlite
    .prepare("select * from message where thread_id = ? and internal = 0 order by seq desc")
    .iterate(threadId) as IterableIterator<MessageRow>;
  for (const row of newestFirst) {
    used += row.text.length;
    if (used > budget && rows.length > 0) break;
    rows.push(row);
  }
  return rows.reverse();
}
