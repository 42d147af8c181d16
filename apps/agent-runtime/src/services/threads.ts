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

/** Where a page of threads ends: the last thread's sort keys (main flag, last activity, id). */
interface ThreadCursor {
  main: number;
  updatedAt: string;
  id: string;
}

export function encodeThreadCursor(row: ThreadRow): string {
  return Buffer.from(JSON.stringify([row.is_main, row.updated_at, row.id])).toString("base64url");
}

/** The cursor's keys, or undefined when it is not one this runtime handed out. */
export function decodeThreadCursor(cursor: string): ThreadCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 3) return undefined;
    const [main, updatedAt, id] = value as unknown[];
    if ((main !== 0 && main !== 1) || typeof updatedAt !== "string" || typeof id !== "string") return undefined;
    return { main, updatedAt, id };
  } catch {
    return undefined;
  }
}

/**
 * A page of web threads (team-chat and webhook threads are not listed, spec "Delivery targets"):
 * the main thread first, then the latest active first, after `cursor`. A thread that becomes active
 * while a client pages moves to the front, so the client may meet it again or not at all.
 */
export async function listWebThreads(
  db: Kysely<RuntimeDatabase>,
  page: { limit: number; after?: ThreadCursor },
): Promise<{ rows: ThreadRow[]; next: string | undefined }> {
  const after = page.after;
  let query = db.selectFrom("thread").selectAll().where("kind", "=", "web");
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb("is_main", "<", after.main),
        eb.and([eb("is_main", "=", after.main), eb("updated_at", "<", after.updatedAt)]),
        eb.and([eb("is_main", "=", after.main), eb("updated_at", "=", after.updatedAt), eb("id", "<", after.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy("is_main", "desc")
    .orderBy("updated_at", "desc")
    .orderBy("id", "desc")
    .limit(page.limit + 1)
    .execute();
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  return { rows: items, next: more && last ? encodeThreadCursor(last) : undefined };
}

/** The context each of these threads last used (tokens and model), by thread id. */
export async function threadContextUsage(
  db: Kysely<RuntimeDatabase>,
  threadIds: string[],
): Promise<Map<string, { contextTokens: number | null; modelId: string | null }>> {
  if (threadIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("thread_context")
    .select(["thread_id", "context_tokens", "model_id"])
    .where("thread_id", "in", threadIds)
    .execute();
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
