import { type CheckState, processFaults, type Readiness, telemetryHealth } from "@agentplane/service-kit";
import type { GatewayLimits, RateLimiter } from "./rate-limit.ts";

/** What the gateway's health endpoints need to know of a service it dispatches to. */
export interface HealthTarget {
  ready(): Promise<boolean>;
  readiness?(): Promise<Readiness>;
}

/** An upstream that has not answered its readiness in this time counts as unavailable. */
const UPSTREAM_TIMEOUT_MS = 2000;

async function upstreamReadiness(target: HealthTarget): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => resolve({ ready: false, checks: {} }), UPSTREAM_TIMEOUT_MS);
  });
  const ask = target.readiness
    ? target.readiness()
    : target.ready().then((ready) => ({ ready, checks: {} as Record<string, CheckState> }));
  try {
    return await Promise.race([ask.catch(() => ({ ready: false, checks: {} })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a limiter's counter store answers within the upstream timeout. */
async function limiterState(check: () => Promise<void>): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckState>((resolve) => {
    timer = setTimeout(() => resolve("down"), UPSTREAM_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      check().then(
        () => "up" as const,
        () => "down" as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The gateway's own dependencies: each rate limiter's store, named by its policy. */
async function limiterChecks(limiters: Record<string, RateLimiter>): Promise<Record<string, CheckState>> {
  const entries = await Promise.all(
    Object.entries(limiters).flatMap(([policy, limiter]) =>
      limiter.check
        ? [limiterState(limiter.check.bind(limiter)).then((state) => [`rate-limiter:${policy}`, state])]
        : [],
    ),
  );
  return Object.fromEntries(entries);
}

/**
 * The gateway's health answers (see docs/operations.md, "Logs and health"):
 * - `/health/live`: the process serves requests; 200.
 * - `/health/ready`: every service it dispatches to is ready; else 503 naming the one that is not.
 * - `/health`: the summary: readiness per service and per dependency, the gateway's own checks
 *   (each rate limiter's Redis), each rate limiter's fail-open count, and process-level faults.
 *   Its status code follows readiness; `status` is `degraded` when a service is not ready or a
 *   check is down (a limiter whose Redis is down lets requests through unlimited: the gateway
 *   still serves, so readiness does not change).
 */
export async function gatewayHealth(
  kind: "live" | "ready" | "summary",
  targets: Record<string, HealthTarget>,
  limits: Pick<GatewayLimits, "rateLimiter" | "userRateLimiter">,
): Promise<Response> {
  if (kind === "live") return Response.json({ status: "ok", service: "api-gateway" });
  // Asked alongside the services: each may take up to the timeout.
  const ownChecks =
    kind === "summary"
      ? limiterChecks({ "per-token": limits.rateLimiter, "per-user": limits.userRateLimiter })
      : undefined;
  const entries = await Promise.all(
    Object.entries(targets).map(async ([name, target]) => [name, await upstreamReadiness(target)] as const),
  );
  const ready = entries.every(([, r]) => r.ready);
  const services = Object.fromEntries(entries.map(([name, r]) => [name, r.ready ? "ready" : "unavailable"]));
  const status = ready ? 200 : 503;
  if (kind === "ready") {
    return Response.json({ status: ready ? "ready" : "unavailable", service: "api-gateway", services }, { status });
  }
  const checks = (await ownChecks) ?? {};
  const rateLimiter = limits.rateLimiter.status?.();
  const userRateLimiter = limits.userRateLimiter.status?.();
  return Response.json(
    {
      status: ready && Object.values(checks).every((state) => state === "up") ? "ok" : "degraded",
      live: true,
      ready,
      services,
      dependencies: Object.fromEntries(entries.map(([name, r]) => [name, r.checks])),
      checks,
      ...(rateLimiter ? { rateLimiter } : {}),
      ...(userRateLimiter ? { userRateLimiter } : {}),
      process: processFaults(),
      ...telemetryHealth(),
    },
    { status },
  );
}

/**
 * Readiness of a service in another process: its `GET /health/ready` (503 names the dependency
 * that is down; a refused connection or a timeout is unavailable).
 */
export function remoteReadiness(fetch: (request: Request) => Promise<Response>): HealthTarget {
  const readiness = async (): Promise<Readiness> => {
    const res = await fetch(
      new Request("http://svc/health/ready", { signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS) }),
    );
    const body = (await res.json().catch(() => ({}))) as { checks?: Record<string, CheckState> };
    return { ready: res.status === 200, checks: body.checks ?? {} };
  };
  return { readiness, ready: async () => (await readiness()).ready };
}
