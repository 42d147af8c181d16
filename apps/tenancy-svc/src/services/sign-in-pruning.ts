import type { Logger } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { TenancyDatabase } from "../db/schema.ts";

/**
 * Device sign-in requests and browser sessions are only ever marked, never deleted, by the flows
 * that use them: without this prune, every sign-in would leave a row forever, and anyone could grow
 * the device-request table without bound (`POST /v1/auth/device` needs no token).
 */

/** A device request is kept this long after its code expired (every decision falls before that). */
export const DEVICE_REQUEST_GRACE_MS = 86_400_000;
/** A session is kept this long after it expired: revoked ones expire within 12 h of their revocation. */
export const SESSION_RETENTION_MS = 30 * 86_400_000;
/** How often a replica prunes, and how long after start it first does. */
export const PRUNE_INTERVAL_MS = 3_600_000;
const FIRST_RUN_MS = 60_000;

export interface PruneLimits {
  /** Rows per delete statement (default 1,000): each statement is its own short transaction. */
  batchSize?: number;
  /** Statements per table per run (default 100); the rest waits for the next run. */
  maxBatches?: number;
}

export interface PruneCounts {
  deviceRequests: number;
  sessions: number;
}

export interface SignInPruner {
  /** One run as of `now`; resolves to what it deleted. After `stop()` it deletes nothing. */
  run(now?: Date): Promise<PruneCounts>;
  /** Ends the timer and any run in progress (after its current statement), then resolves. */
  stop(): Promise<void>;
}

type Table = "device_authorizations" | "browser_sessions";

/**
 * Deletes up to `batchSize` rows of `table` that expired before `cutoff`, repeated until a batch
 * comes up short, `maxBatches` were done, or `stopped()` says so. Replicas running at once skip the
 * rows another one is deleting (SKIP LOCKED) and a second delete of a row is a no-op, so overlapping
 * runs are safe.
 */
async function deleteExpired(
  db: Kysely<TenancyDatabase>,
  table: Table,
  cutoff: Date,
  limits: Required<PruneLimits>,
  stopped: () => boolean,
): Promise<number> {
  let total = 0;
  for (let i = 0; i < limits.maxBatches && !stopped(); i++) {
    const result = await db
      .deleteFrom(table)
      .where("id", "in", (eb) =>
        eb
          .selectFrom(table)
          .select("id")
          .where("expires_at", "<", cutoff)
          .limit(limits.batchSize)
          .forUpdate()
          .skipLocked(),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    total += n;
    if (n < limits.batchSize) break;
  }
  return total;
}

/**
 * Prunes on a timer (unref'd, so it never keeps the process alive) when `intervalMs` > 0; `run`
 * is also callable directly. Nothing deleted is still usable: a device code is dead once expired
 * (decisions and the token's handover happen within its lifetime, plus a day of slack), and
 * `GET /v1/auth/sessions` lists only sessions neither revoked nor expired.
 */
export function startSignInPruning(deps: {
  db: Kysely<TenancyDatabase>;
  logger: Logger;
  intervalMs?: number;
  limits?: PruneLimits;
}): SignInPruner {
  const limits = { batchSize: 1000, maxBatches: 100, ...deps.limits };
  const intervalMs = deps.intervalMs ?? PRUNE_INTERVAL_MS;
  let stopped = false;
  let running: Promise<PruneCounts> | undefined;
  const isStopped = () => stopped;

  const prune = async (now: Date): Promise<PruneCounts> => {
    const deviceRequests = await deleteExpired(
      deps.db,
      "device_authorizations",
      new Date(now.getTime() - DEVICE_REQUEST_GRACE_MS),
      limits,
      isStopped,
    );
    const sessions = await deleteExpired(
      deps.db,
      "browser_sessions",
      new Date(now.getTime() - SESSION_RETENTION_MS),
      limits,
      isStopped,
    );
    // Counts only: the rows hold hashes of secrets, and their ids say nothing an operator needs.
    if (deviceRequests + sessions > 0) {
      deps.logger.info({ deviceRequests, sessions }, "expired device sign-ins and browser sessions pruned");
    }
    return { deviceRequests, sessions };
  };

  const run = async (now = new Date()): Promise<PruneCounts> => {
    if (stopped) return { deviceRequests: 0, sessions: 0 };
    // One run at a time per replica: a timer tick during a long run joins it.
    running ??= prune(now).finally(() => {
      running = undefined;
    });
    return running;
  };

  const tick = () => {
    run().catch((err: unknown) => {
      // The next run tries again.
      if (!stopped) deps.logger.warn({ err: (err as Error).message }, "pruning expired sign-ins failed");
    });
  };
  const first = intervalMs > 0 ? setTimeout(tick, Math.min(FIRST_RUN_MS, intervalMs)) : undefined;
  const timer = intervalMs > 0 ? setInterval(tick, intervalMs) : undefined;
  first?.unref();
  timer?.unref();

  return {
    run,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
