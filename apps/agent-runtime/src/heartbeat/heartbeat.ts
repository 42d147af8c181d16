import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { deliver } from "../chat/deliver.ts";
import type { HeartbeatRunStatus } from "../db/schema/agent.ts";
import { deliveryDeps, type RuntimeDeps } from "../deps.ts";
import { newId, nowIso } from "../ids.ts";
import { effectiveModels, loadAgent, modelDefaults } from "../services/agent.ts";
import { runAgentTurn } from "../services/agent-turns.ts";
import { classifyHeartbeat, withoutSentinels } from "./gate.ts";

export const HEARTBEAT_FILE = "HEARTBEAT.md";
export const HEARTBEAT_SOURCE = "heartbeat";

export interface HeartbeatResult {
  status: HeartbeatRunStatus | "busy" | "empty";
  runId?: string;
  text?: string;
  reason?: string;
}

/**
 * The checklist without its HTML comments (one with nothing but blank lines and comments is
 * empty); a `<!--` never closed stays as written. One pass: a lazy `<!--[\s\S]*?-->` scanned to
 * the end of the text from every opening, and a file of openings (the shell tools can write it)
 * held the event loop for minutes.
 */
export function checklistText(raw: string): string {
  let kept = "";
  let from = 0;
  for (;;) {
    const open = raw.indexOf("<!--", from);
    if (open < 0) break;
    const close = raw.indexOf("-->", open + 4);
    // No close after this opening: none after any later one either.
    if (close < 0) break;
    kept += raw.slice(from, open);
    from = close + 3;
  }
  return (kept + raw.slice(from)).trim();
}

/**
 * Heartbeat runs: every HEARTBEAT_INTERVAL_MINUTES the agent works through `<data dir>/HEARTBEAT.md`
 * in its own heartbeat thread with the heartbeat model; the result passes the DELIVER/SUPPRESS
 * gate before it is broadcast like `All channels`. A tick while any run of the agent executes is
 * skipped (the next tick tries again); an empty or missing checklist costs no model call.
 */
/** The shortest interval between heartbeat runs: less (`0.001`) would run the checklist back to back. */
const MIN_INTERVAL_MINUTES = 1;
/** The longest delay Node's timers take as given. */
const MAX_TIMER_MS = 2_147_483_647;

export class Heartbeat {
  readonly #deps: RuntimeDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<HeartbeatResult> | undefined;
  #stopped = false;

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
  }

  start(): void {
    const minutes = this.#deps.config.env.HEARTBEAT_INTERVAL_MINUTES;
    if (minutes <= 0 || this.#timer || this.#stopped) return;
    if (minutes < MIN_INTERVAL_MINUTES)
      this.#deps.logger.warn(
        { minutes, used: MIN_INTERVAL_MINUTES },
        "HEARTBEAT_INTERVAL_MINUTES is below the shortest interval; heartbeat runs every minute",
      );
    const interval = Math.max(minutes, MIN_INTERVAL_MINUTES) * 60_000;
    this.#arm(Date.now() + interval, interval);
  }

  /**
   * Waits for `due` in steps Node's timers can take: a delay past 2^31-1 ms (some 24.8 days) would
   * be taken as 1 ms, and a heartbeat of a month would run a model call every millisecond.
   */
  #arm(due: number, interval: number): void {
    this.#timer = setTimeout(
      () => {
        if (this.#stopped) return;
        if (Date.now() < due) return this.#arm(due, interval);
        void this.tick();
        this.#arm(Date.now() + interval, interval);
      },
      Math.max(0, Math.min(due - Date.now(), MAX_TIMER_MS)),
    );
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  /** One tick: runs the checklist now unless the agent is busy. */
  tick(): Promise<HeartbeatResult> {
    if (this.#running || this.#deps.activity.busy) return Promise.resolve({ status: "busy" });
    const run = this.#run().finally(() => {
      this.#running = undefined;
    });
    this.#running = run;
    return run;
  }

  async #thread(): Promise<string> {
    const db = this.#deps.database.db;
    const existing = await db.selectFrom("thread").select("id").where("kind", "=", "heartbeat").executeTakeFirst();
    if (existing) return existing.id;
    const created = await this.#deps.messages.createThread({ kind: "heartbeat", title: "Heartbeat runs" });
    return created.id;
  }

  async #run(): Promise<HeartbeatResult> {
    const deps = this.#deps;
    const end = deps.activity.begin();
    try {
      let checklist = "";
      try {
        checklist = checklistText(await readFile(join(deps.config.dataDir, HEARTBEAT_FILE), "utf8"));
      } catch {
        // Missing: same as empty.
      }
      if (checklist === "") return { status: "empty" };
      const started = performance.now();
      const result = await deps.tracing.run("heartbeat", {}, () => this.#execute(checklist));
      const duration = performance.now() - started;
      if (result.status === "delivered") {
        const failedOpen = result.reason?.startsWith("gate failed open") ?? false;
        deps.telemetry.emit("heartbeat.delivered", {
          "run.id": result.runId,
          "gate.failed_open": failedOpen,
          "run.duration_ms": duration,
        });
      } else if (result.status === "suppressed") {
        deps.telemetry.emit("heartbeat.suppressed", { "run.id": result.runId, "run.duration_ms": duration });
      }
      return result;
    } finally {
      end();
    }
  }

  async #execute(checklist: string): Promise<HeartbeatResult> {
    const deps = this.#deps;
    const db = deps.database.db;
    const agent = await loadAgent(db);
    const models = effectiveModels(agent, modelDefaults(deps.config));
    const runId = newId("hb");
    const threadId = await this.#thread();
    await db
      .insertInto("heartbeat_run")
      .values({
        id: runId,
        status: "failed",
        reason: "interrupted",
        text: null,
        thread_id: threadId,
        model_id: models.heartbeat,
        started_at: nowIso(),
        finished_at: null,
      })
      .execute();
    const finish = async (status: HeartbeatRunStatus, text: string | null, reason: string | null) => {
      await db
        .updateTable("heartbeat_run")
        .set({ status, text, reason, finished_at: nowIso() })
        .where("id", "=", runId)
        .execute();
      return { status, runId, ...(text ? { text } : {}), ...(reason ? { reason } : {}) };
    };
    const prompt =
      "Heartbeat run: work through this checklist now, using your tools where useful. Report only what needs " +
      `the user's attention; if nothing does, say so in one short sentence.\n\n${checklist}`;
    let finalText: string;
    try {
      const outcome = await runAgentTurn(deps, {
        threadId,
        text: prompt,
        source: HEARTBEAT_SOURCE,
        runId,
        purpose: "heartbeat",
        quiet: true,
      });
      finalText = withoutSentinels(outcome.delivered.at(-1)?.text ?? "");
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, runId }, "heartbeat run failed");
      return finish("failed", null, (err as Error).message.slice(0, 2000));
    }
    if (finalText === "") return finish("suppressed", null, "the run ended without text");
    const gate = await deps.usage.within({ source: "heartbeat", threadId, runId }, () =>
      classifyHeartbeat(deps.model, models.classification, finalText, deps.logger),
    );
    if (gate.decision === "SUPPRESS") return finish("suppressed", finalText, null);
    await deliver(deliveryDeps(deps), "All channels", finalText, HEARTBEAT_SOURCE);
    return finish("delivered", finalText, gate.failedOpen ? `gate failed open: ${gate.reason}` : null);
  }
}
