import { ingressConnections } from "./command-slots.ts";
import { type SandboxDeps, systemCaller } from "./context.ts";
import type { SandboxRow } from "./mapping.ts";
import { bootSandbox, recordUnexpectedExit } from "./sandboxes.ts";
import type { ShellSessions } from "./shell-sessions.ts";
import { stopSandbox } from "./stop-delete.ts";

const DEFAULT_IDLE_CHECK_INTERVAL_MS = 15_000;
const DEFAULT_GC_INTERVAL_MS = 60_000;

/** Asks the driver to remove what belongs to sandboxes whose row is gone. */
export async function collectGarbage(deps: SandboxDeps): Promise<string[]> {
  if (!deps.driver.collectGarbage) return [];
  return deps.driver.collectGarbage(async (ids) => {
    const rows = await deps.db.selectFrom("sandboxes").select("id").where("id", "in", ids).execute();
    return new Set(rows.map((r) => r.id));
  });
}

/** Open interactive streams (WebSocket exec and attach) per sandbox: they count as activity for the idle stop. */
const openStreams = new Map<string, number>();

export function streamOpened(sandboxId: string): void {
  openStreams.set(sandboxId, (openStreams.get(sandboxId) ?? 0) + 1);
}

export function streamClosed(sandboxId: string): void {
  const left = (openStreams.get(sandboxId) ?? 1) - 1;
  if (left > 0) openStreams.set(sandboxId, left);
  else openStreams.delete(sandboxId);
}

export function hasOpenStreams(sandboxId: string): boolean {
  return (openStreams.get(sandboxId) ?? 0) > 0;
}

/**
 * The local driver's sandboxes die with the process: at start-up, those recorded as running or
 * starting whose process is gone are booted again, and those caught stopping are recorded stopped.
 * The organization's `running-sandboxes` limit refuses none of them: they held their slots before
 * the restart and hold them still (a limit lowered since refuses new starts only).
 */
export async function reconcileSandboxes(deps: SandboxDeps): Promise<void> {
  const stale = await deps.db
    .selectFrom("sandboxes")
    .selectAll()
    .where("state", "in", ["running", "starting", "stopping"])
    .execute();
  for (const row of stale) {
    if ((await deps.driver.status(row.id)).phase === "running") continue;
    if (row.state === "stopping") {
      await deps.db
        .updateTable("sandboxes")
        .set({ state: "stopped", updated_at: new Date() })
        .where("id", "=", row.id)
        .execute();
      continue;
    }
    await deps.db
      .updateTable("sandboxes")
      .set({ state: "starting", updated_at: new Date() })
      .where("id", "=", row.id)
      .execute();
    void bootSandbox(deps, row);
  }
}

function lastActivity(row: SandboxRow): number {
  return new Date(row.last_activity_at ?? row.started_at ?? row.updated_at).getTime();
}

/**
 * Stops running sandboxes whose idle timeout passed with no exec, session, stream or ingress
 * activity. A connection still open through the ingress (an event stream, a WebSocket to the
 * sandbox's port) is activity for as long as it lasts, as an open exec stream is: its user is
 * still there, and the stop would end what they are using.
 */
export async function stopIdleSandboxes(deps: SandboxDeps, sessions: ShellSessions, now = Date.now()): Promise<void> {
  const rows = await deps.db
    .selectFrom("sandboxes")
    .selectAll()
    .where("state", "=", "running")
    .where("idle_timeout_seconds", ">", 0)
    .execute();
  for (const row of rows) {
    if (now - lastActivity(row) < row.idle_timeout_seconds * 1000) continue;
    if (hasOpenStreams(row.id) || sessions.hasSessions(row.id) || ingressConnections.holds(deps, row.id)) continue;
    await stopSandbox(deps, systemCaller(row.org_id), {
      projectId: row.project_id,
      sandboxId: row.id,
      reason: "idle timeout",
    }).catch((err) => deps.logger.warn({ err, sandboxId: row.id }, "idle stop failed"));
  }
}

/**
 * The service's background duties: record sandboxes whose process ended on its own, bring back
 * those that were running before a restart, and close idle sessions and stop idle sandboxes on an
 * interval. Returns what stops them.
 */
export async function startLifecycle(deps: SandboxDeps, sessions: ShellSessions): Promise<{ stop(): void }> {
  const unsubscribe = deps.driver.onEvent(({ sandboxId, status }) => {
    if (status.phase === "starting") {
      // Why a start is still waiting (the scheduler's or kubelet's reason) shows as the sandbox's lastError.
      void deps.db
        .updateTable("sandboxes")
        .set({ last_error: status.message ?? null, updated_at: new Date() })
        .where("id", "=", sandboxId)
        .where("state", "=", "starting")
        .execute()
        .catch((err) => deps.logger.warn({ err, sandboxId }, "recording a start's progress failed"));
      return;
    }
    void recordUnexpectedExit(deps, sandboxId, status.phase, status.message).catch((err) =>
      deps.logger.error({ err, sandboxId }, "recording a sandbox exit failed"),
    );
  });
  // A driver that cannot answer yet (an unreachable API server) must not keep the service from
  // starting: readiness reports it, and its sandboxes are found again once it answers.
  await reconcileSandboxes(deps).catch((err) =>
    deps.logger.warn({ err }, "sandboxes not reconciled at start: the driver is unavailable"),
  );
  const idleTimer = setInterval(() => {
    sessions.closeIdle();
    void stopIdleSandboxes(deps, sessions).catch((err) => deps.logger.warn({ err }, "idle check failed"));
  }, deps.config.idleCheckIntervalMs ?? DEFAULT_IDLE_CHECK_INTERVAL_MS);
  idleTimer.unref();
  const gcTimer = deps.driver.collectGarbage
    ? setInterval(() => {
        void collectGarbage(deps).catch((err) => deps.logger.warn({ err }, "sandbox garbage collection failed"));
      }, deps.config.gcIntervalMs ?? DEFAULT_GC_INTERVAL_MS)
    : undefined;
  gcTimer?.unref();
  return {
    stop() {
      clearInterval(idleTimer);
      if (gcTimer) clearInterval(gcTimer);
      unsubscribe();
    },
  };
}
