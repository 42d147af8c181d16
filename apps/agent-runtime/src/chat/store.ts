import { randomInt } from "node:crypto";
import type { TeamChatChannel } from "@agentplane/contracts/runtime";
import { notFound } from "@agentplane/problem-details";
import type Database from "better-sqlite3";
import type { Kysely } from "kysely";
import type { RuntimeDatabase, TeamChatChannelTable, TeamChatDeliveryTable } from "../db/schema/index.ts";
import { newId, nowIso } from "../ids.ts";
import type { LinkedChannel } from "./team-chat.ts";

const OWNER_KEY = "team_chat.owner_id";
const OWNER_DM_KEY = "team_chat.owner_dm";
const PAIRING_KEY = "team_chat.pairing_code";

export function toTeamChatChannel(row: TeamChatChannelTable): TeamChatChannel {
  return { id: row.channel_id, name: row.name, linkedAt: row.linked_at, main: row.is_main === 1 };
}

export function toLinkedChannel(row: TeamChatChannelTable): LinkedChannel {
  return { id: row.channel_id, kind: "channel", linkedAt: row.linked_at, main: row.is_main === 1 };
}

export async function listChannels(db: Kysely<RuntimeDatabase>): Promise<TeamChatChannelTable[]> {
  return db.selectFrom("team_chat_channel").selectAll().orderBy("linked_at").orderBy("channel_id").execute();
}

export async function isLinked(db: Kysely<RuntimeDatabase>, channelId: string): Promise<boolean> {
  const row = await db
    .selectFrom("team_chat_channel")
    .select("channel_id")
    .where("channel_id", "=", channelId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Links a channel (idempotent: a linked channel keeps its `linkedAt`; a known name fills a missing one). */
export async function linkChannel(db: Kysely<RuntimeDatabase>, channelId: string, name: string | null): Promise<void> {
  await db
    .insertInto("team_chat_channel")
    .values({ channel_id: channelId, name, linked_at: nowIso(), is_main: 0 })
    .onConflict((oc) =>
      oc.column("channel_id").doUpdateSet((eb) => ({ name: eb.fn.coalesce("excluded.name", "name") })),
    )
    .execute();
}

/**
 * Unlinks a channel the bot can no longer post in (removed from it, archived, deleted): true when
 * it was linked. Deliveries then go to the next linked channel, or to the web chat.
 */
export async function unlinkChannel(db: Kysely<RuntimeDatabase>, channelId: string): Promise<boolean> {
  const removed = await db.deleteFrom("team_chat_channel").where("channel_id", "=", channelId).executeTakeFirst();
  return removed.numDeletedRows > 0n;
}

/** The channels view's change: link, unlink, flag or unflag main (one main at most). */
export async function updateChannel(
  db: Kysely<RuntimeDatabase>,
  channelId: string,
  change: { linked?: boolean | undefined; main?: boolean | undefined },
  name: string | null = null,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (change.linked === false) {
      const removed = await trx.deleteFrom("team_chat_channel").where("channel_id", "=", channelId).executeTakeFirst();
      if (removed.numDeletedRows === 0n) throw notFound("Linked channel", channelId);
      return;
    }
    if (change.linked === true) await linkChannel(trx, channelId, name);
    else if (!(await isLinked(trx, channelId))) throw notFound("Linked channel", channelId);
    if (change.main === true) {
      await trx.updateTable("team_chat_channel").set({ is_main: 0 }).where("channel_id", "!=", channelId).execute();
      await trx.updateTable("team_chat_channel").set({ is_main: 1 }).where("channel_id", "=", channelId).execute();
    } else if (change.main === false) {
      await trx.updateTable("team_chat_channel").set({ is_main: 0 }).where("channel_id", "=", channelId).execute();
    }
  });
}

async function readSetting(db: Kysely<RuntimeDatabase>, key: string): Promise<string | null> {
  const row = await db.selectFrom("setting").select("value").where("key", "=", key).executeTakeFirst();
  return row?.value ?? null;
}

async function writeSetting(db: Kysely<RuntimeDatabase>, key: string, value: string | null): Promise<void> {
  if (value === null) {
    await db.deleteFrom("setting").where("key", "=", key).execute();
    return;
  }
  await db
    .insertInto("setting")
    .values({ key, value })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
    .execute();
}

export const pairedOwner = (db: Kysely<RuntimeDatabase>) => readSetting(db, OWNER_KEY);
export const pairingCode = (db: Kysely<RuntimeDatabase>) => readSetting(db, PAIRING_KEY);
/**
 * The owner's DM channel, kept with whose DM it is (`<owner> <channel>`): one kept for another
 * owner (CHAT_OWNER_ID changed since) is none, so deliveries never go on to a former owner.
 */
export async function cachedOwnerDm(db: Kysely<RuntimeDatabase>, owner: string): Promise<string | null> {
  const [who, channel] = ((await readSetting(db, OWNER_DM_KEY)) ?? "").split(" ");
  return who === owner && channel ? channel : null;
}
export const cacheOwnerDm = (db: Kysely<RuntimeDatabase>, owner: string, channelId: string) =>
  writeSetting(db, OWNER_DM_KEY, `${owner} ${channelId}`);

/** The owner claimed the agent with the code: stored, and the code is spent. */
export async function pairOwner(db: Kysely<RuntimeDatabase>, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await writeSetting(trx, OWNER_KEY, userId);
    await writeSetting(trx, PAIRING_KEY, null);
    await writeSetting(trx, OWNER_DM_KEY, null);
  });
}

/** A fresh one-time code (8 digits in two groups, easy to type in a DM); replaces any earlier one. */
export async function newPairingCode(db: Kysely<RuntimeDatabase>): Promise<string> {
  const code = `${randomInt(0, 10_000).toString().padStart(4, "0")}-${randomInt(0, 10_000).toString().padStart(4, "0")}`;
  await writeSetting(db, PAIRING_KEY, code);
  return code;
}

export async function forgetOwner(db: Kysely<RuntimeDatabase>): Promise<void> {
  await writeSetting(db, OWNER_KEY, null);
  await writeSetting(db, OWNER_DM_KEY, null);
}

/** Days an event id is remembered: Slack retries an event for minutes, not days. */
const EVENT_MEMORY_MS = 24 * 3600 * 1000;

/**
 * Remembers an event id; false when it was seen before (a redelivery). Synchronous on the raw
 * connection so that two copies arriving in the same tick cannot both pass.
 */
export function firstSighting(sqlite: Database.Database, eventId: string): boolean {
  let insert = sightingStatements.get(sqlite);
  if (!insert) {
    insert = sqlite.prepare("insert into team_chat_event (event_id, received_at) values (?, ?) on conflict do nothing");
    sightingStatements.set(sqlite, insert);
  }
  return insert.run(eventId, nowIso()).changes === 1;
}

/** Prepared once per connection: every inbound event runs it. */
const sightingStatements = new WeakMap<Database.Database, Database.Statement<[string, string]>>();

/** Days a posted (or given up) delivery is kept (pending ones stay until posted or given up). */
const SENT_DELIVERY_MEMORY_MS = 7 * 24 * 3600 * 1000;

/** Forgets event ids older than a day and deliveries posted or given up more than a week ago. */
export function forgetOldEvents(sqlite: Database.Database, now = Date.now()): void {
  sqlite
    .prepare("delete from team_chat_event where received_at < ?")
    .run(new Date(now - EVENT_MEMORY_MS).toISOString());
  sqlite
    .prepare("delete from team_chat_delivery where status in ('sent', 'failed') and created_at < ?")
    .run(new Date(now - SENT_DELIVERY_MEMORY_MS).toISOString());
}

/** Longer than one attempt can take (the Web API client's retries, a Retry-After wait). */
const DELIVERY_LEASE_MS = 120_000;

export async function createDelivery(
  db: Kysely<RuntimeDatabase>,
  input: { channelId: string; threadTs: string | null; text: string },
): Promise<TeamChatDeliveryTable> {
  const now = nowIso();
  // The first attempt runs right away; the retry pass leaves the row alone until this lease ends.
  const lease = new Date(Date.now() + DELIVERY_LEASE_MS).toISOString();
  const row: TeamChatDeliveryTable = {
    id: newId("dlv"),
    channel_id: input.channelId,
    thread_ts: input.threadTs,
    text: input.text,
    chunks_sent: 0,
    attempts: 0,
    status: "pending",
    last_error: null,
    next_attempt_at: lease,
    created_at: now,
  };
  await db.insertInto("team_chat_delivery").values(row).execute();
  return row;
}

export async function recordChunkSent(db: Kysely<RuntimeDatabase>, id: string, chunksSent: number): Promise<void> {
  await db.updateTable("team_chat_delivery").set({ chunks_sent: chunksSent }).where("id", "=", id).execute();
}

export async function markDelivered(db: Kysely<RuntimeDatabase>, id: string): Promise<void> {
  await db.updateTable("team_chat_delivery").set({ status: "sent", last_error: null }).where("id", "=", id).execute();
}

export async function markDeliveryFailed(
  db: Kysely<RuntimeDatabase>,
  id: string,
  attempts: number,
  error: string,
  nextAttemptAt: Date,
): Promise<void> {
  await db
    .updateTable("team_chat_delivery")
    .set({ attempts, last_error: error.slice(0, 500), next_attempt_at: nextAttemptAt.toISOString() })
    .where("id", "=", id)
    .execute();
}

/** Slack refused the delivery for good: it is kept (a week) with its error, and not retried. */
export async function markDeliveryGivenUp(
  db: Kysely<RuntimeDatabase>,
  id: string,
  attempts: number,
  error: string,
): Promise<void> {
  await db
    .updateTable("team_chat_delivery")
    .set({ status: "failed", attempts, last_error: error.slice(0, 500) })
    .where("id", "=", id)
    .execute();
}

export async function dueDeliveries(db: Kysely<RuntimeDatabase>, now: Date): Promise<TeamChatDeliveryTable[]> {
  return db
    .selectFrom("team_chat_delivery")
    .selectAll()
    .where("status", "=", "pending")
    .where("next_attempt_at", "<=", now.toISOString())
    .orderBy("created_at")
    .limit(50)
    .execute();
}
