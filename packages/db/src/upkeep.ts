import { type Kysely, sql } from "kysely";

/**
 * The embedded engine (PGlite) runs no autovacuum: without this, nothing there would ever reclaim
 * the rows that updates and deletes leave behind (so pruning would free no space), or gather the
 * statistics the planner needs once tables have grown. Postgres servers have their own.
 */

/** How often the embedded engine is vacuumed and analyzed by default, and the first run's delay. */
export const UPKEEP_INTERVAL_MS = 60 * 60_000;
const FIRST_RUN_MS = 5 * 60_000;

export interface UpkeepOptions {
  /** Between runs (default one hour; 0 turns upkeep off). The first run comes after 5 minutes at most. */
  intervalMs?: number;
  /** Told of a run that failed (the next run tries again). */
  onError?: (err: Error) => void;
}

/**
 * `VACUUM (ANALYZE)` of every table outside the system schemas, one statement per table so other
 * work interleaves between them (each statement waits for the engine's single connection, so
 * never runs inside a transaction). Returns the number of tables done.
 */
// biome-ignore lint/suspicious/noExplicitAny: runs on the untyped root handle
export async function vacuumAnalyze(kysely: Kysely<any>): Promise<number> {
  const tables = await sql<{ schema: string; name: string }>`select schemaname as schema, tablename as name
    from pg_tables where schemaname not in ('pg_catalog', 'information_schema') order by 1, 2`.execute(kysely);
  for (const t of tables.rows) await sql`vacuum (analyze) ${sql.table(`${t.schema}.${t.name}`)}`.execute(kysely);
  return tables.rows.length;
}

/** Runs `vacuumAnalyze` on a timer (unref'd: it never keeps the process alive); `stop()` ends it. */
// biome-ignore lint/suspicious/noExplicitAny: runs on the untyped root handle
export function startUpkeep(kysely: Kysely<any>, options: UpkeepOptions = {}): { stop(): Promise<void> } {
  const interval = options.intervalMs ?? UPKEEP_INTERVAL_MS;
  if (interval <= 0) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = vacuumAnalyze(kysely)
      .then(
        () => {},
        (err: unknown) => {
          if (!stopped) options.onError?.(err as Error);
        },
      )
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(run, Math.min(FIRST_RUN_MS, interval));
  const timer = setInterval(run, interval);
  first.unref();
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
