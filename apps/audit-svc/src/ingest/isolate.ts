import { type Kysely, sql } from "kysely";
import type { AuditDb } from "../db/schema.ts";

/**
 * True when the database refused the content of a row rather than being unavailable: SQLSTATE
 * class 22 (data exception, e.g. `\u0000` or a lone surrogate in a JSON string) or 23 (integrity).
 * Only these are isolated and dead-lettered; anything else (a lost connection, a timeout) fails the
 * batch so that the bus redelivers it.
 */
export function isContentError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^2[23]/.test(code);
}

export interface DeadLetter<T> {
  item: T;
  error: unknown;
}

/**
 * Writes a batch; when the database rejects its content, splits it in halves and writes each, so
 * that the rows it accepts are stored and each rejected row is found alone and handed to
 * `deadLetter` (about 2·log2(n) extra statements for one bad row in n).
 */
export async function writeIsolating<T>(
  items: readonly T[],
  write: (items: readonly T[]) => Promise<unknown>,
  deadLetter: (letter: DeadLetter<T>) => Promise<void>,
): Promise<void> {
  if (items.length === 0) return;
  try {
    await write(items);
  } catch (error) {
    if (!isContentError(error)) throw error;
    if (items.length === 1) {
      await deadLetter({ item: items[0] as T, error });
      return;
    }
    const middle = Math.ceil(items.length / 2);
    await writeIsolating(items.slice(0, middle), write, deadLetter);
    await writeIsolating(items.slice(middle), write, deadLetter);
  }
}

/** Storage's own text cannot hold NUL; the payload keeps it as the JSON escape `\u0000`. */
function storable(text: string): string {
  return text.replaceAll("\u0000", "\\u0000");
}

export async function storeDeadLetter(
  db: Kysely<AuditDb>,
  letter: { eventId: string; topic: string; payload: unknown; error: unknown },
): Promise<void> {
  const message = letter.error instanceof Error ? letter.error.message : String(letter.error);
  const code = (letter.error as { code?: unknown } | null)?.code;
  await db
    .insertInto("dead_letters")
    .values({
      event_id: storable(letter.eventId),
      topic: letter.topic,
      payload: storable(JSON.stringify(letter.payload)),
      error: storable(typeof code === "string" ? `${code}: ${message}` : message),
    })
    .onConflict((oc) => oc.column("event_id").doNothing())
    .execute();
}

export async function countDeadLetters(db: Kysely<AuditDb>): Promise<number> {
  const row = await db.selectFrom("dead_letters").select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow();
  return Number(row.n);
}
