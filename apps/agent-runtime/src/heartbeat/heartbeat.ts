import { open } from "node:fs/promises";
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
/**
 * The largest checklist read (64 KiB). The shell tools can write the file, and every tick would
 * otherwise read all of it and send it to the model; a larger one skips the run instead.
 */
export const HEARTBEAT_MAX_BYTES = 64 * 1024;

/** The checklist as written; `tooLarge` (nothing read past the limit) when over HEARTBEAT_MAX_BYTES. */
export type ChecklistFile = { text: string } | { tooLarge: true };

/**
 * Reads `<data dir>/HEARTBEAT.md`, at most one byte past HEARTBEAT_MAX_BYTES: the size is what was
 * read, not a stat taken before a write could grow the file. Missing: empty.
 */
export async function readChecklistFile(dataDir: string): Promise<ChecklistFile> {
  const file = await open(join(dataDir, HEARTBEAT_FILE), "r").catch(() => undefined);
  if (!file) return { text: "" };
  try {
    const buffer = Buffer.alloc(HEARTBEAT_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await file.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > HEARTBEAT_MAX_BYTES) return { tooLarge: true };
    return { text: buffer.subarray(0, length).toString("utf8") };
  } catch {
    // A directory in its place, say: same as missing.
    return { text: "" };
  } finally {
    await file.close();
  }
}

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
      const file = await readChecklistFile(deps.config.dataDir);
      if ("tooLarge" in file) return this.#skipTooLarge();
      const checklist = checklistText(file.text);
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

  /** An oversized checklist: no model call, a warning, and a skipped run that says why. */
  async #skipTooLarge(): Promise<HeartbeatResult> {
    const reason = `${HEARTBEAT_FILE} is larger than ${HEARTBEAT_MAX_BYTES} bytes; shorten it for heartbeat runs to resume`;
    this.#deps.logger.warn(
      { file: HEARTBEAT_FILE, limitBytes: HEARTBEAT_MAX_BYTES },
      "heartbeat run skipped: checklist too large",
    );
    const runId = newId("hb");
    const now = nowIso();
    await this.#deps.database.db
      .insertInto("heartbeat_run")
      .values({
        id: runId,
        status: "skipped",
        reason,
        text: null,
        thread_id: null,
        model_id: null,
        started_at: now,
        finished_at: now,
      })
      .execute();
    return { status: "skipped", runId, reason };
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
