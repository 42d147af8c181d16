import { MIN_SCHEDULE_INTERVAL_SECONDS } from "@agentplane/contracts/runtime";
import { Cron } from "croner";

export interface Timing {
  cron: string | null;
  at: string | null;
  every_seconds: number | null;
  timezone: string | null;
}

export interface FieldProblem {
  pointer: string;
  message: string;
}

/** How late a missed one-shot `at` run may be and still run at start (it has no interval of its own). */
export const AT_GRACE_MS = 60 * 60_000;

export function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * The shortest time in seconds between two runs of a cron pattern that has a seconds field (six
 * or seven fields), or undefined for a five-field one (a minute at least). Only the seconds field
 * can bring two runs closer than a minute: the seconds it matches within one minute decide.
 */
function shortestSecondsGap(pattern: string): number | undefined {
  const fields = pattern.trim().split(/\s+/);
  if (fields.length < 6) return undefined;
  const minuteStart = Date.UTC(2030, 0, 1, 0, 0, 0);
  const seconds = new Cron(`${fields[0]} 0 0 1 1 *`, { paused: true, timezone: "UTC" })
    .nextRuns(60, new Date(minuteStart - 1000))
    .map((d) => d.getTime())
    .filter((t) => t >= minuteStart && t < minuteStart + 60_000)
    .map((t) => (t - minuteStart) / 1000);
  if (seconds.length < 2) return undefined;
  let gap = 60 - (seconds.at(-1) as number) + (seconds[0] as number);
  for (let i = 1; i < seconds.length; i++) gap = Math.min(gap, (seconds[i] as number) - (seconds[i - 1] as number));
  return gap;
}

/** Problems with a schedule's timing, one per field (400 naming the field). */
export function timingProblems(t: Timing): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const set = [t.cron, t.at, t.every_seconds].filter((v) => v !== null && v !== undefined).length;
  if (set !== 1) {
    problems.push({ pointer: "/body/cron", message: "exactly one of cron, at and everySeconds is required" });
    return problems;
  }
  if (t.timezone !== null && !validTimezone(t.timezone)) {
    problems.push({ pointer: "/body/timezone", message: `"${t.timezone}" is not an IANA time zone` });
  }
  if (t.timezone !== null && t.cron === null) {
    problems.push({ pointer: "/body/timezone", message: "timezone applies to cron schedules only" });
  }
  if (t.cron !== null && problems.length === 0) {
    let cron: Cron;
    try {
      cron = new Cron(t.cron, { paused: true, ...(t.timezone ? { timezone: t.timezone } : {}) });
    } catch (err) {
      problems.push({ pointer: "/body/cron", message: `not a valid cron expression: ${(err as Error).message}` });
      return problems;
    }
    // Such as the 31st of February: valid fields that no date matches.
    if (cron.nextRun() === null) {
      problems.push({ pointer: "/body/cron", message: "no date matches this pattern, so it would never run" });
      return problems;
    }
    // The same floor as everySeconds: a seconds field must not run the agent more often.
    const gap = shortestSecondsGap(t.cron);
    if (gap !== undefined && gap < MIN_SCHEDULE_INTERVAL_SECONDS) {
      problems.push({
        pointer: "/body/cron",
        message: `runs ${gap} s apart; schedules run at most every ${MIN_SCHEDULE_INTERVAL_SECONDS} s`,
      });
    }
  }
  return problems;
}

/** The first due time strictly after `afterMs`, or null (a one-shot in the past). */
export function nextAfter(t: Timing, afterMs: number): number | null {
  if (t.cron !== null) {
    const next = new Cron(t.cron, { paused: true, ...(t.timezone ? { timezone: t.timezone } : {}) }).nextRun(
      new Date(afterMs),
    );
    return next ? next.getTime() : null;
  }
  if (t.at !== null) {
    const at = Date.parse(t.at);
    return at > afterMs ? at : null;
  }
  return afterMs + (t.every_seconds as number) * 1000;
}

/** The schedule's interval at a due time: how late a missed run may be and still run at start. */
export function intervalAt(t: Timing, dueMs: number): number {
  if (t.every_seconds !== null) return t.every_seconds * 1000;
  if (t.cron !== null) {
    const next = nextAfter(t, dueMs);
    return next === null ? AT_GRACE_MS : next - dueMs;
  }
  return AT_GRACE_MS;
}

/** Wait after the n-th consecutive failure: 30 s doubling, at most one hour. */
export function backoffMs(failures: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, failures - 1), 60 * 60_000);
}
