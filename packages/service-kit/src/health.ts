import { exportHealth } from "@agentplane/telemetry";
import { processFaults } from "./process-guard.ts";

/** One dependency's check: resolves (true or nothing) when it is up; false or a throw means down. */
// biome-ignore lint/suspicious/noConfusingVoidType: a check that returns nothing passed
export type ReadinessCheck = () => Promise<boolean | void> | boolean | void;

/**
 * The dependencies a service needs, by name (`database`, `bus`, `driver`, an upstream…). An
 * `{ check, required: false }` entry is reported but does not make the service unready (tenancy
 * keeps answering while the bus is down: its events wait in the outbox).
 */
export type ReadinessChecks = Record<string, ReadinessCheck | { check: ReadinessCheck; required: false }>;

export type CheckState = "up" | "down";

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
}

/** A check that has not answered in this time counts as down (a dead host can hang a connect). */
export const READINESS_TIMEOUT_MS = 2000;

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    const result = await Promise.race([Promise.resolve().then(check), timeout]);
    return result === false ? "down" : "up";
  } catch {
    return "down";
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every check at once; ready when every required one is up. */
export async function checkReadiness(checks: ReadinessChecks, timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, entry]) => {
      const check = typeof entry === "function" ? entry : entry.check;
      const required = typeof entry === "function";
      return { name, required, state: await runCheck(check, timeoutMs) };
    }),
  );
  return {
    ready: entries.every((e) => !e.required || e.state === "up"),
    checks: Object.fromEntries(entries.map((e) => [e.name, e.state])),
  };
}

/**
 * The three health answers every deployable gives:
 * - `GET /health/live`: the process is up and serving (200 always; a liveness probe restarts on failure).
 * - `GET /health/ready`: every required dependency is reachable (200, else 503 naming the one down).
 * - `GET /health`: the summary for people and dashboards (readiness, each check, process faults,
 *   and with export on, `telemetry`: what reached the collector, failed batches, drops); its
 *   status code follows readiness (a failing collector never makes a service unready).
 */
export async function healthResponse(
  kind: "live" | "ready" | "summary",
  service: string,
  readiness: () => Promise<Readiness>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  if (kind === "live") return { status: 200, body: { status: "ok", service } };
  const r = await readiness();
  if (kind === "ready") {
    return {
      status: r.ready ? 200 : 503,
      body: { status: r.ready ? "ready" : "unavailable", service, checks: r.checks },
    };
  }
  return {
    status: r.ready ? 200 : 503,
    body: {
      status: r.ready ? "ok" : "unavailable",
      service,
      live: true,
      ready: r.ready,
      checks: r.checks,
      process: processFaults(),
      ...telemetryHealth(),
    },
  };
}

/** `{ telemetry: … }` when this process exports telemetry, else nothing. */
export function telemetryHealth(): { telemetry?: ReturnType<typeof exportHealth> } {
  const telemetry = exportHealth();
  return telemetry ? { telemetry } : {};
}
