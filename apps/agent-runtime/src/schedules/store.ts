import {
  type CreateScheduleBody,
  MAX_CONSECUTIVE_SCHEDULE_FAILURES,
  MAX_SCHEDULES,
  type Schedule,
  type ScheduleRun,
  type UpdateScheduleBody,
} from "@agentplane/contracts/runtime";
import { badRequest, conflict, notFound } from "@agentplane/problem-details";
import type { Kysely } from "kysely";
import type { RuntimeDatabase, ScheduleRunTable, ScheduleTable } from "../db/schema/index.ts";
import { newId } from "../ids.ts";
import { nextAfter, type Timing, timingProblems } from "./timing.ts";

export type ScheduleRow = ScheduleTable;
export type ScheduleRunRow = ScheduleRunTable & { seq: number };
type Db = Kysely<RuntimeDatabase>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    at: row.at,
    everySeconds: row.every_seconds,
    timezone: row.timezone,
    prompt: row.prompt,
    deliverTo: row.deliver_to,
    active: row.active === 1,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    consecutiveFailures: row.consecutive_failures,
    pausedReason: row.paused_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toScheduleRun(row: ScheduleRunRow): ScheduleRun {
  return {
    id: row.id,
    scheduleId: row.schedule_id,
    trigger: row.trigger,
    status: row.status,
    scheduledFor: row.scheduled_for,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    result: row.result,
    error: row.error,
  };
}

/**
 * `atGiven`: the request sets a one-shot time, which must be ahead of `nowMs` (one already past
 * would never run). A schedule that ran keeps its past `at` through edits of other fields.
 */
function checkTiming(timing: Timing, nowMs: number, atGiven: boolean): void {
  const problems = timingProblems(timing);
  if (atGiven && timing.at !== null && Date.parse(timing.at) <= nowMs) {
    problems.push({
      pointer: "/body/at",
      message: `${timing.at} is not in the future (now ${new Date(nowMs).toISOString()}), so it would never run`,
    });
  }
  if (problems.length > 0) throw badRequest(problems.map((p) => p.message).join("; "), problems);
}

async function requireUniqueName(db: Db, name: string, exceptId?: string): Promise<void> {
  const taken = await db.selectFrom("schedule").select("id").where("name", "=", name).executeTakeFirst();
  if (taken && taken.id !== exceptId) throw conflict(`A schedule named "${name}" already exists`);
}

export async function getSchedule(db: Db, id: string): Promise<ScheduleRow> {
  const row = await db.selectFrom("schedule").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound("Schedule", id);
  return row;
}

export async function findSchedule(db: Db, idOrName: string): Promise<ScheduleRow> {
  const row = await db
    .selectFrom("schedule")
    .selectAll()
    .where((eb) => eb.or([eb("id", "=", idOrName), eb("name", "=", idOrName)]))
    .executeTakeFirst();
  if (!row) throw notFound("Schedule", idOrName);
  return row;
}

export function listSchedules(db: Db): Promise<ScheduleRow[]> {
  return db.selectFrom("schedule").selectAll().orderBy("created_at").orderBy("id").execute();
}

export async function createSchedule(db: Db, input: CreateScheduleBody, nowMs: number): Promise<ScheduleRow> {
  const timing: Timing = {
    cron: input.cron ?? null,
    at: input.at ?? null,
    every_seconds: input.everySeconds ?? null,
    timezone: input.timezone ?? null,
  };
  checkTiming(timing, nowMs, true);
  await requireUniqueName(db, input.name);
  const { count } = await db
    .selectFrom("schedule")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  if (Number(count) >= MAX_SCHEDULES) {
    throw conflict(`The runtime keeps at most ${MAX_SCHEDULES} schedules; delete one before creating another`);
  }
  const now = new Date(nowMs).toISOString();
  const active = input.active ?? true;
  const row: ScheduleRow = {
    id: newId("sch"),
    name: input.name,
    ...timing,
    at: timing.at === null ? null : new Date(timing.at).toISOString(),
    prompt: input.prompt,
    deliver_to: input.deliverTo ?? "All channels",
    active: active ? 1 : 0,
    next_run_at: active ? iso(nextAfter(timing, nowMs)) : null,
    last_run_at: null,
    consecutive_failures: 0,
    paused_reason: null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto("schedule").values(row).execute();
  return row;
}

export async function updateSchedule(
  db: Db,
  id: string,
  input: UpdateScheduleBody,
  nowMs: number,
): Promise<ScheduleRow> {
  const row = await getSchedule(db, id);
  const timingChanged = ["cron", "at", "everySeconds", "timezone"].some((k) => k in input);
  const timing: Timing = {
    cron: input.cron !== undefined ? input.cron : row.cron,
    at: input.at !== undefined ? (input.at === null ? null : new Date(input.at).toISOString()) : row.at,
    every_seconds: input.everySeconds !== undefined ? input.everySeconds : row.every_seconds,
    timezone: input.timezone !== undefined ? input.timezone : row.timezone,
  };
  // Switching kind: setting one of cron/at/everySeconds clears the others unless they are given too.
  if (input.cron != null && input.at === undefined) timing.at = null;
  if (input.cron != null && input.everySeconds === undefined) timing.every_seconds = null;
  if (input.at != null && input.cron === undefined) timing.cron = null;
  if (input.at != null && input.everySeconds === undefined) timing.every_seconds = null;
  if (input.everySeconds != null && input.cron === undefined) timing.cron = null;
  if (input.everySeconds != null && input.at === undefined) timing.at = null;
  if (timing.cron === null && input.timezone === undefined) timing.timezone = null;
  checkTiming(timing, nowMs, input.at != null);
  if (input.name !== undefined) await requireUniqueName(db, input.name, id);
  const active = input.active ?? row.active === 1;
  const reactivated = input.active === true && row.active === 0;
  const patch: Partial<ScheduleRow> = {
    ...timing,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.prompt !== undefined ? { prompt: input.prompt } : {}),
    ...(input.deliverTo !== undefined ? { deliver_to: input.deliverTo } : {}),
    active: active ? 1 : 0,
    updated_at: new Date(nowMs).toISOString(),
  };
  if (!active) patch.next_run_at = null;
  else if (timingChanged || reactivated || row.next_run_at === null) patch.next_run_at = iso(nextAfter(timing, nowMs));
  if (reactivated) {
    patch.consecutive_failures = 0;
    patch.paused_reason = null;
  }
  await db.updateTable("schedule").set(patch).where("id", "=", id).execute();
  return getSchedule(db, id);
}

export async function deleteSchedule(db: Db, id: string): Promise<void> {
  const { numDeletedRows } = await db.deleteFrom("schedule").where("id", "=", id).executeTakeFirst();
  if (numDeletedRows === 0n) throw notFound("Schedule", id);
}

export async function listScheduleRuns(db: Db, id: string, limit = 100): Promise<ScheduleRunRow[]> {
  await getSchedule(db, id);
  return (await db
    .selectFrom("schedule_run")
    .selectAll()
    .where("schedule_id", "=", id)
    .orderBy("seq", "desc")
    .limit(limit)
    .execute()) as ScheduleRunRow[];
}

export { MAX_CONSECUTIVE_SCHEDULE_FAILURES };
