import { ProblemError } from "@agentplane/problem-details";
import type { KubeConfig, RequestContext } from "@kubernetes/client-node";

/** The HTTP status of a client-node API failure (undefined for a connection failure). */
export function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * What the API server said, for logs, readiness and `lastError`: the `Status` message of an HTTP
 * failure (a 403 names the verb and resource RBAC refused), else the connection error.
 */
export function apiMessage(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string; cause?: { message?: string; code?: string } };
  if (typeof e?.code === "number") {
    let body = e.body;
    if (typeof body === "string") {
      try {
        body = JSON.parse(body);
      } catch {
        // Not JSON: use it as it is.
      }
    }
    const message = (body as { message?: string })?.message ?? (typeof body === "string" ? body : undefined);
    return `${e.code}${message ? ` ${message}` : ""}`;
  }
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ""}`;
}

/** How long one API call may take before it is given up, where the driver's options set none. */
export const DEFAULT_API_TIMEOUT_MS = 30_000;

/**
 * The same kubeconfig, each request of an API client made from it given up after `timeoutMs`
 * with an error naming the call: an API server that takes the connection and never answers would
 * otherwise hold a stop, a start or a deletion for good. (Watches keep their own inactivity timer,
 * exec and port-forward their own streams: neither takes this signal.)
 */
export function withRequestDeadline(kc: KubeConfig, timeoutMs: number): KubeConfig {
  const bounded = Object.create(kc) as KubeConfig;
  bounded.applySecurityAuthentication = async (context: RequestContext) => {
    await kc.applySecurityAuthentication(context);
    const call = `${context.getHttpMethod()} ${new URL(context.getUrl()).pathname}`;
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new ApiDeadlineError(`did not answer within ${Math.round(timeoutMs / 1000)} s (${call})`)),
      timeoutMs,
    );
    timer.unref();
    context.setSignal(controller.signal);
  };
  return bounded;
}

/** A call given up at the driver's deadline (withRequestDeadline). */
export class ApiDeadlineError extends Error {
  override name = "ApiDeadlineError";
}

/** A failed API call as the caller's problem: 504 when it was given up at the deadline, else 502 naming the answer. */
export function apiProblem(err: unknown): ProblemError {
  const detail = `The Kubernetes API server: ${apiMessage(err)}`;
  return err instanceof ApiDeadlineError || (err as { cause?: unknown })?.cause instanceof ApiDeadlineError
    ? new ProblemError("gateway-timeout", { detail })
    : new ProblemError("bad-gateway", { detail });
}
