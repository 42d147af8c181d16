import { MAX_CONSECUTIVE_SCHEDULE_FAILURES } from "@agentplane/contracts/runtime";
import { conflict, notFound } from "@agentplane/problem-details";
import { deliver } from "../chat/deliver.ts";
import { deliveryDeps, type RuntimeDeps } from "../deps.ts";
import { newId } from "../ids.ts";
import { runAgentTurn } from "../services/agent-turns.ts";
import type { ScheduleRunner } from "./runner.ts";
import { getSchedule, type ScheduleRow, type ScheduleRunRow } from "./store.ts";
import { backoffMs, intervalAt, nextAfter } from "./timing.ts";

/** Milliseconds since the epoch; injected so tests move time without sleeping. */
export type Clock = () => number;

const iso = (ms: number) => new Date(ms).toISOString();
const label = (name: string) => `**Scheduled: ${name}**`;
/** The longest the timer sleeps before looking at the table again (schedules change meanwhile). */
const MAX_SLEEP_MS = 30_000;

/**
 * Runs schedules from the `schedule` table. Each due schedule runs once (never overlapping
 * itself); a failure backs off and ten in a row pause the schedule with a notice. At start,
 * a run missed while the runtime was down runs once if it is less than one interval late,
 * else it is recorded as skipped.
 */
export class Scheduler implements ScheduleRunner {
  readonly #deps: RuntimeDeps;
  readonly #clock: Clock;
  readonly #running = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #generation = 0;
  #closed = false;

  constructor(deps: RuntimeDeps, clock: Clock = Date.now) {
    this.#deps = deps;
    this.#clock = clock;
  }

  get now(): number {
    return this.#clock();
  }

  isRunning(scheduleId: string): boolean {
    return this.#running.has(scheduleId);
  }

  /** Applies the missed-run rule and closes runs a crash left open. Call once at start. */
  async recover(): Promise<void> {
    const db = this.#deps.database.db;
    const now = this.#clock();
    await db
      .updateTable("schedule_run")
      .set({ status: "failed", error: "interrupted: the runtime stopped during the run", finished_at: iso(now) })
      .where("status", "=", "running")
      .execute();
    const missed = await db
      .selectFrom("schedule")
      .selectAll()
      .where("active", "=", 1)
      .where("next_run_at", "<", iso(now))
      .execute();
    for (const schedule of missed) {
      const due = Date.parse(schedule.next_run_at as string);
      if (now - due < intervalAt(schedule, due)) {
        this.#start(schedule, "missed", due);
      } else {
        await this.#insertRun(schedule.id, "missed", "skipped", due, {
          error: `missed while the runtime was not running (${Math.round((now - due) / 1000)} s late, more than one interval)`,
          finished_at: iso(now),
        });
        await db
          .updateTable("schedule")
          .set({ next_run_at: this.#next(schedule, now) })
          .where("id", "=", schedule.id)
          .execute();
      }
    }
  }

  /** Re-arms the timer now (a schedule was created or changed). */
  wake(): void {
    if (this.#started && !this.#closed) this.#arm(0);
  }

  /** Looks at the table every so often (or when the next run is due, if sooner). */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#arm(0);
  }

  #arm(delayMs: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    const generation = ++this.#generation;
    this.#timer = setTimeout(() => void this.#loop(generation), delayMs);
    this.#timer.unref();
  }

  async #loop(generation: number): Promise<void> {
    let sleep = MAX_SLEEP_MS;
    try {
      await this.tick(false);
      const next = await this.#deps.database.db
        .selectFrom("schedule")
        .select((eb) => eb.fn.min("next_run_at").as("next"))
        .where("active", "=", 1)
        .executeTakeFirst();
      if (next?.next) sleep = Math.max(50, Math.min(MAX_SLEEP_MS, Date.parse(next.next) - this.#clock()));
    } catch (err) {
      if (!this.#closed) this.#deps.logger.warn({ err: (err as Error).message }, "scheduler tick failed");
    }
    // A wake() meanwhile armed a newer loop: this one ends.
    if (!this.#closed && generation === this.#generation) this.#arm(sleep);
  }

  /** Starts every due schedule; with `wait`, resolves when the runs it started have finished. */
  async tick(wait = true): Promise<void> {
    const now = this.#clock();
    const db = this.#deps.database.db;
    const due = await db
      .selectFrom("schedule")
      .selectAll()
      .where("active", "=", 1)
      .where("next_run_at", "<=", iso(now))
      .execute();
    const started: Promise<void>[] = [];
    for (const schedule of due) {
      const dueAt = Date.parse(schedule.next_run_at as string);
      if (this.#running.has(schedule.id)) {
        await this.#insertRun(schedule.id, "schedule", "skipped", dueAt, {
          error: "the previous run of this schedule was still running",
          finished_at: iso(now),
        });
        await db
          .updateTable("schedule")
          .set({ next_run_at: this.#next(schedule, now) })
          .where("id", "=", schedule.id)
          .execute();
        continue;
      }
      started.push(this.#start(schedule, "schedule", dueAt).done);
    }
    if (wait) await Promise.all(started);
  }

  /** `POST /agents/schedules/{id}/run`: starts a run now (409 while one is running). */
  async runNow(id: string): Promise<{ run: ScheduleRunRow; done: Promise<void> }> {
    const schedule = await getSchedule(this.#deps.database.db, id);
    if (this.#running.has(id)) throw conflict(`Schedule ${schedule.name} is running; wait for the run to finish`);
    const runId = newId("srun");
    const { begun, done } = this.#start(schedule, "manual", this.#clock(), runId);
    // Deleted since it was read: the run was not recorded, as for any deleted schedule.
    if (!(await begun)) throw notFound("Schedule", id);
    const run = await this.#deps.database.db
      .selectFrom("schedule_run")
      .selectAll()
      .where("id", "=", runId)
      .executeTakeFirstOrThrow();
    return { run: run as ScheduleRunRow, done };
  }

  /** Waits for every run in flight. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.idle();
  }

  #next(schedule: ScheduleRow, afterMs: number): string | null {
    const next = nextAfter(schedule, afterMs);
    return next === null ? null : iso(next);
  }

  async #insertRun(
    scheduleId: string,
    trigger: ScheduleRunRow["trigger"],
    status: ScheduleRunRow["status"],
    dueMs: number,
    extra: Partial<ScheduleRunRow> = {},
    id = newId("srun"),
  ): Promise<string> {
    await this.#deps.database.db
      .insertInto("schedule_run")
      .values({
        id,
        schedule_id: scheduleId,
        trigger,
        status,
        scheduled_for: iso(dueMs),
        started_at: null,
        finished_at: null,
        result: null,
        error: null,
        ...extra,
      })
      .execute();
    return id;
  }

  /**
   * Marks the run started synchronously (so no second tick starts it), then records and runs it.
   * `begun` is false when the schedule was deleted before the run was recorded; `done` never
   * rejects (a failure to record the run's outcome is logged).
   */
  #start(
    schedule: ScheduleRow,
    trigger: ScheduleRunRow["trigger"],
    dueMs: number,
    runId = newId("srun"),
  ): { begun: Promise<boolean>; done: Promise<void> } {
    const startedAt = this.#clock();
    const begun = this.#begin(schedule, trigger, dueMs, runId, startedAt);
    const done = begun
      .then((recorded) => (recorded ? this.#execute(schedule, runId, startedAt) : undefined))
      .catch((err: unknown) => {
        this.#deps.logger.warn(
          { schedule: schedule.name, runId, err: (err as Error).message },
          "scheduled run not recorded",
        );
      })
      .finally(() => this.#running.delete(schedule.id));
    this.#running.set(schedule.id, done);
    return { begun, done };
  }

  /** Records the run as running and the schedule's last (and next) run; false if it is gone. */
  async #begin(
    schedule: ScheduleRow,
    trigger: ScheduleRunRow["trigger"],
    dueMs: number,
    runId: string,
    startedAt: number,
  ): Promise<boolean> {
    const db = this.#deps.database.db;
    try {
      await this.#insertRun(schedule.id, trigger, "running", dueMs, { started_at: iso(startedAt) }, runId);
    } catch (err) {
      const still = await db.selectFrom("schedule").select("id").where("id", "=", schedule.id).executeTakeFirst();
      if (!still) return false;
      throw err;
    }
    const advance = trigger === "manual" ? {} : { next_run_at: this.#next(schedule, startedAt) };
    await db
      .updateTable("schedule")
      .set({ last_run_at: iso(startedAt), ...advance })
      .where("id", "=", schedule.id)
      .execute();
    return true;
  }

  async #execute(schedule: ScheduleRow, runId: string, startedAt: number) {
    const deps = this.#deps;
    const db = deps.database.db;
    const source = `schedule:${schedule.name}`;
    try {
      const thread = await deps.messages.createThread({
        kind: "schedule",
        title: `Schedule ${schedule.name} ${runId}`,
        externalId: runId,
      });
      const answer = await deps.tracing.run("schedule", { threadId: thread.id, runId }, async () => {
        const outcome = await runAgentTurn(deps, {
          threadId: thread.id,
          text: schedule.prompt,
          source,
          runId,
          purpose: "cron",
        });
        const text = outcome.delivered.map((m) => m.text).join("\n\n") || "(The agent finished without a text answer.)";
        await deliver(deliveryDeps(deps), schedule.deliver_to, `${label(schedule.name)}\n\n${text}`, source);
        return text;
      });
      deps.telemetry.emit("schedule.run", {
        "schedule.id": schedule.id,
        "run.id": runId,
        outcome: "delivered",
        "run.duration_ms": this.#clock() - startedAt,
      });
      await db
        .updateTable("schedule_run")
        .set({ status: "succeeded", result: answer, finished_at: iso(this.#clock()) })
        .where("id", "=", runId)
        .execute();
      await db.updateTable("schedule").set({ consecutive_failures: 0 }).where("id", "=", schedule.id).execute();
    } catch (err) {
      deps.telemetry.emit("schedule.run", {
        "schedule.id": schedule.id,
        "run.id": runId,
        outcome: "failed",
        "run.duration_ms": this.#clock() - startedAt,
      });
      await this.#failed(schedule, runId, err);
    }
  }

  async #failed(schedule: ScheduleRow, runId: string, err: unknown): Promise<void> {
    const deps = this.#deps;
    const db = deps.database.db;
    const message = (err instanceof Error ? err.message : String(err)).split("\n")[0]?.slice(0, 300) ?? "";
    const now = this.#clock();
    await db
      .updateTable("schedule_run")
      .set({ status: "failed", error: message, finished_at: iso(now) })
      .where("id", "=", runId)
      .execute();
    const current = await db.selectFrom("schedule").selectAll().where("id", "=", schedule.id).executeTakeFirst();
    if (!current) return;
    const failures = current.consecutive_failures + 1;
    const source = `schedule:${schedule.name}`;
    deps.logger.warn({ schedule: schedule.name, runId, failures, err: message }, "scheduled run failed");
    if (failures >= MAX_CONSECUTIVE_SCHEDULE_FAILURES) {
      const reason = `paused after ${failures} consecutive failed runs`;
      await db
        .updateTable("schedule")
        .set({ consecutive_failures: failures, active: 0, next_run_at: null, paused_reason: reason })
        .where("id", "=", schedule.id)
        .execute();
      await this.#notify(
        schedule,
        `${label(schedule.name)}\n\nThe run failed: ${message}. The schedule is ${reason}; set it active again to resume.`,
        source,
      );
      return;
    }
    const backoff = now + backoffMs(failures);
    const regular = current.next_run_at === null ? null : Date.parse(current.next_run_at);
    const next = regular === null ? null : iso(Math.max(regular, backoff));
    await db
      .updateTable("schedule")
      .set({ consecutive_failures: failures, ...(current.active === 1 ? { next_run_at: next } : {}) })
      .where("id", "=", schedule.id)
      .execute();
    await this.#notify(schedule, `${label(schedule.name)}\n\nThe run failed: ${message}. Run ${runId}.`, source);
  }

  async #notify(schedule: ScheduleRow, text: string, source: string): Promise<void> {
    try {
      await deliver(deliveryDeps(this.#deps), schedule.deliver_to, text, source);
    } catch (err) {
      this.#deps.logger.warn({ schedule: schedule.name, err: (err as Error).message }, "schedule notice not delivered");
    }
  }
}
