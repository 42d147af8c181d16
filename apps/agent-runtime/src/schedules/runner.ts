import type { ScheduleRunRow } from "./store.ts";

/**
 * The schedule runner as the routes and the schedule tool use it (`Scheduler` in scheduler.ts
 * implements it). A type of its own so that RuntimeDeps, which the scheduler takes, need not
 * import the scheduler.
 */
export interface ScheduleRunner {
  /** The runner's clock, in epoch milliseconds. */
  readonly now: number;
  /** Looks for due schedules now rather than at the next timer. */
  wake(): void;
  isRunning(scheduleId: string): boolean;
  runNow(id: string): Promise<{ run: ScheduleRunRow; done: Promise<void> }>;
  /** Starts every due schedule now; with `wait`, resolves once their runs ended. */
  tick(wait?: boolean): Promise<void>;
  /** Resolves once no run is going on. */
  idle(): Promise<void>;
}
