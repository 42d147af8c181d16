import type { Logger } from "@agentplane/service-kit";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { TenancyDatabase } from "../db/schema.ts";

/**
 * Device sign-in requests, browser sessions, API tokens and invitations are only ever marked, never
 * deleted, by the flows that use them: without this prune, every sign-in, revoked or expired token
 * and answered invitation would leave a row forever, and anyone could grow the device-request table
 * without bound (`POST /v1/auth/device` needs no token).
 */

/** A device request is kept this long after its code expired (every decision falls before that). */
export const DEVICE_REQUEST_GRACE_MS = 86_400_000;
/** A session is kept this long after it expired: revoked ones expire within 12 h of their revocation. */
export const SESSION_RETENTION_MS = 30 * 86_400_000;
/** A token is kept, listed as revoked or expired, this long after it stopped working. */
export const API_TOKEN_RETENTION_MS = 30 * 86_400_000;
/** An invitation is kept, listed as answered or expired, this long after it was answered or expired. */
export const INVITATION_RETENTION_MS = 30 * 86_400_000;
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
  apiTokens: number;
  invitations: number;
}

const NOTHING: PruneCounts = { deviceRequests: 0, sessions: 0, apiTokens: 0, invitations: 0 };

export interface SignInPruner {
  /** One run as of `now`; resolves to what it deleted. After `stop()` it deletes nothing. */
  run(now?: Date): Promise<PruneCounts>;
  /** Ends the timer and any run in progress (after its current statement), then resolves. */
  stop(): Promise<void>;
}

type Table = "device_authorizations" | "browser_sessions" | "api_tokens" | "invitations";

/**
 * When a row stopped being usable, each expression matching an index (migrations 0008 and 0009).
 * `least` skips nulls: a token ends at its revocation or its expiry, whichever came first, and one
 * with neither has no end; an invitation ends when answered (accepted, declined or revoked) or at
 * its expiry.
 */
const ENDED_AT: Record<Table, RawBuilder<Date>> = {
  device_authorizations: sql<Date>`expires_at`,
  browser_sessions: sql<Date>`expires_at`,
  api_tokens: sql<Date>`least(revoked_at, expires_at)`,
  invitations: sql<Date>`least(responded_at, expires_at)`,
};

/**
 * Deletes up to `batchSize` rows of `table` that ended before `cutoff`, repeated until a batch
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
          .where(ENDED_AT[table], "<", cutoff)
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
 * (decisions and the token's handover happen within its lifetime, plus a day of slack),
 * `GET /v1/auth/sessions` lists only sessions neither revoked nor expired, and a token or an
 * invitation goes a month after it stopped working (until then it is listed, marked as such). A
 * deleted token takes along the sessions opened with it, which stopped working with it.
 */
/** What is pruned, counted under which name, and how long after it stopped working. */
const PRUNED: readonly [keyof PruneCounts, Table, number][] = [
  ["deviceRequests", "device_authorizations", DEVICE_REQUEST_GRACE_MS],
  ["sessions", "browser_sessions", SESSION_RETENTION_MS],
  ["apiTokens", "api_tokens", API_TOKEN_RETENTION_MS],
  ["invitations", "invitations", INVITATION_RETENTION_MS],
];

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
    const counts: PruneCounts = { deviceRequests: 0, sessions: 0, apiTokens: 0, invitations: 0 };
    // One after the other: each table's batches share the database with the service's requests.
    for (const [key, table, retentionMs] of PRUNED) {
      counts[key] = await deleteExpired(deps.db, table, new Date(now.getTime() - retentionMs), limits, isStopped);
    }
    // Counts only: the rows hold hashes of secrets and email addresses, and their ids say nothing
    // an operator needs (the audit trail keeps what happened to each).
    if (counts.deviceRequests + counts.sessions + counts.apiTokens + counts.invitations > 0) {
      deps.logger.info(counts, "old sign-ins, tokens and invitations pruned");
    }
    return counts;
  };

  const run = async (now = new Date()): Promise<PruneCounts> => {
    if (stopped) return { ...NOTHING };
    // One run at a time per replica: a timer tick during a long run joins it.
    running ??= prune(now).finally(() => {
      running = undefined;
    });
    return running;
  };

  const tick = () => {
    run().catch((err: unknown) => {
      // The next run tries again.
      if (!stopped)
        deps.logger.warn({ err: (err as Error).message }, "pruning old sign-ins, tokens and invitations failed");
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
