import type Database from "better-sqlite3";
import { newId, nowIso } from "../ids.ts";
import type { MessageRow, NewMessage, ThreadRow } from "./threads.ts";

interface PendingThread {
  thread: ThreadRow;
  resolve: (row: ThreadRow) => void;
  reject: (err: unknown) => void;
}

interface PendingAppend {
  thread?: undefined;
  row: Omit<MessageRow, "seq">;
  /** Set by the commit. */
  seq?: number;
  resolve: (row: MessageRow) => void;
  reject: (err: unknown) => void;
}

/**
 * Appends chat messages (turn steps, deliveries). Appends arriving in the same event-loop turn
 * are committed together in one transaction (group commit, as for webhook accepts): under a
 * burst of deliver-only webhooks that is one WAL write for many messages instead of two each
 * (the message and its thread's `updated_at`). Every append resolves only after its commit.
 */
export class MessageWriter {
  readonly #sqlite: Database.Database;
  readonly #insert: Database.Statement;
  readonly #insertThread: Database.Statement;
  readonly #listAll: Database.Statement<[string], MessageRow>;
  readonly #touchThread: Database.Statement;
  readonly #mainWebThread: Database.Statement<[], { id: string }>;
  readonly #writeBatch: (batch: Array<PendingAppend | PendingThread>) => void;
  #batch: Array<PendingAppend | PendingThread> = [];
  #mainWebThreadId: string | undefined;

  constructor(sqlite: Database.Database) {
    this.#sqlite = sqlite;
    this.#insert = sqlite.prepare(
      `insert into message (id, thread_id, role, content, text, internal, source, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#touchThread = sqlite.prepare(`update thread set updated_at = ? where id = ?`);
    this.#insertThread = sqlite.prepare(
      `insert into thread (id, kind, title, is_main, external_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#listAll = sqlite.prepare(
      `select seq, id, thread_id, role, content, text, internal, source, created_at from message
       where thread_id = ? order by seq`,
    );
    this.#mainWebThread = sqlite.prepare(`select id from thread where kind = 'web' and is_main = 1`);
    this.#writeBatch = sqlite.transaction((batch: Array<PendingAppend | PendingThread>) => {
      const touched = new Map<string, string>();
      for (const item of batch) {
        if (item.thread) {
          const t = item.thread;
          this.#insertThread.run(t.id, t.kind, t.title, t.is_main, t.external_id, t.created_at, t.updated_at);
          continue;
        }
        const { row } = item;
        const { lastInsertRowid } = this.#insert.run(
          row.id,
          row.thread_id,
          row.role,
          row.content,
          row.text,
          row.internal,
          row.source,
          row.created_at,
        );
        item.seq = Number(lastInsertRowid);
        touched.set(row.thread_id, row.created_at);
      }
      for (const [threadId, at] of touched) this.#touchThread.run(at, threadId);
    });
  }

  /**
   * The id of the agent's main web thread. It is created at first boot and never replaced, so
   * it is read once instead of on every delivery.
   */
  mainWebThreadId(): string {
    if (this.#mainWebThreadId === undefined) {
      const found = this.#mainWebThread.get();
      if (!found) throw new Error("the agent has no main web thread");
      this.#mainWebThreadId = found.id;
    }
    return this.#mainWebThreadId;
  }

  /**
   * Creates a thread in the next group commit (a webhook run's thread, with its first message
   * right behind it in the same transaction).
   */
  createThread(input: { kind: ThreadRow["kind"]; title: string; externalId?: string }): Promise<ThreadRow> {
    const now = nowIso();
    const thread: ThreadRow = {
      id: newId("thr"),
      kind: input.kind,
      title: input.title,
      is_main: 0,
      external_id: input.externalId ?? null,
      created_at: now,
      updated_at: now,
    };
    return new Promise((resolve, reject) => this.#enqueue({ thread, resolve, reject }));
  }

  /** Every stored step of a thread (internal ones too), oldest first: the model's view of it. */
  listAll(threadId: string): MessageRow[] {
    return this.#listAll.all(threadId);
  }

  append(input: NewMessage): Promise<MessageRow> {
    const row = {
      id: newId("msg"),
      thread_id: input.threadId,
      role: input.role,
      content: JSON.stringify(input.content),
      text: input.text,
      internal: input.internal ? 1 : 0,
      source: input.source,
      created_at: nowIso(),
    };
    return new Promise((resolve, reject) => this.#enqueue({ row, resolve, reject }));
  }

  #enqueue(item: PendingAppend | PendingThread): void {
    this.#batch.push(item);
    if (this.#batch.length === 1) setImmediate(() => this.#flush());
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    if (!this.#sqlite.open) {
      for (const item of batch) item.reject(new Error("the database is closed"));
      return;
    }
    try {
      this.#writeBatch(batch);
    } catch {
      // One bad append (a thread that no longer exists) must not fail the others: one by one.
      for (const item of batch) this.#writeOne(item);
      return;
    }
    for (const item of batch) this.#settle(item);
  }

  #writeOne(item: PendingAppend | PendingThread): void {
    try {
      this.#writeBatch([item]);
    } catch (err) {
      item.reject(err);
      return;
    }
    this.#settle(item);
  }

  #settle(item: PendingAppend | PendingThread): void {
    if (item.thread) item.resolve(item.thread);
    else item.resolve({ ...item.row, seq: item.seq ?? 0 });
  }
}
