import {
  EGRESS_IDENTITY_SIGNER,
  internalGetSandboxEgressRoute,
  internalRecordEgressRefusalRoute,
  type SandboxEgressFacts,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type Logger, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";
import type { EgressFacts } from "./facts.ts";
import { DEFAULT_REFUSAL_WINDOW_MS } from "./refusal-window.ts";

/** How long one call to sandbox-svc may take before the connection waiting on it is refused. */
export const DEFAULT_SANDBOX_CALL_TIMEOUT_MS = 3000;
/** How long a sandbox's facts are reused (labels change rarely; governance reuses its answers 2 s). */
const FACTS_TTL_MS = 2000;

/** Logs a kind of failure once per window, with how many were left unlogged since. */
class FailureLog {
  private readonly last = new Map<string, { at: number; unlogged: number }>();
  private readonly logger: Logger;
  private readonly windowMs: number;

  constructor(logger: Logger, windowMs: number) {
    this.logger = logger;
    this.windowMs = windowMs;
  }

  warn(message: string, err: unknown, fields: Record<string, unknown> = {}): void {
    const now = Date.now();
    const seen = this.last.get(message);
    if (seen && now - seen.at < this.windowMs) {
      seen.unlogged += 1;
      return;
    }
    this.last.set(message, { at: now, unlogged: 0 });
    this.logger.warn(
      {
        err: (err as Error)?.message ?? String(err),
        ...fields,
        ...(seen?.unlogged ? { unlogged: seen.unlogged } : {}),
      },
      message,
    );
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof ProblemError && err.status === 404;
}

/**
 * The egress deployable's facts: asked of sandbox-svc's internal API as the `egress` service
 * (decision 0065), each call bounded by `timeoutMs`. A sandbox sandbox-svc does not know goes
 * nowhere; a sandbox-svc that does not answer refuses the connection (503, fail closed), and a
 * refusal it could not take is lost; either failure is logged once per window.
 */
export function remoteEgressFacts(options: {
  sandbox: ServiceClient;
  logger: Logger;
  timeoutMs?: number;
  /** The refusal window: how often a failure is logged (60 s). */
  windowMs?: number;
}): EgressFacts {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SANDBOX_CALL_TIMEOUT_MS;
  const failures = new FailureLog(options.logger, options.windowMs ?? DEFAULT_REFUSAL_WINDOW_MS);
  const principal = servicePrincipal(EGRESS_IDENTITY_SIGNER);
  const cache = new LRUCache<string, SandboxEgressFacts>({ max: 10_000, ttl: FACTS_TTL_MS });
  return {
    async sandbox(sandboxId) {
      const cached = cache.get(sandboxId);
      if (cached) return cached;
      try {
        const facts = await callInternal(options.sandbox, internalGetSandboxEgressRoute, {
          principal,
          params: { sandboxId },
          signal: AbortSignal.timeout(timeoutMs),
        });
        cache.set(sandboxId, facts);
        return facts;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        failures.warn("sandbox-svc did not answer a sandbox's egress facts: its connections are refused", err, {
          sandboxId,
        });
        throw new ProblemError("service-unavailable", {
          detail: "The sandbox service is unavailable; retry shortly",
          headers: { "retry-after": "2" },
        });
      }
    },
    async recordRefusal(refusal) {
      try {
        await callInternal(options.sandbox, internalRecordEgressRefusalRoute, {
          principal,
          body: refusal,
          signal: AbortSignal.timeout(timeoutMs),
        });
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        failures.warn("sandbox-svc did not take an egress refusal record", err, { sandboxId: refusal.sandboxId });
        return false;
      }
    },
  };
}
