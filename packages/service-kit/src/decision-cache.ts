import {
  type DecisionRequest,
  type DecisionResponse,
  internalDecideRoute,
  type Principal,
} from "@agentplane/contracts";
import { annotateSpan, inChildSpan } from "@agentplane/telemetry";
import { LRUCache } from "lru-cache";
import type { ServiceClient } from "./client.ts";
import { servicePrincipal } from "./identity.ts";
import { callInternal } from "./internal-route.ts";

export interface DecisionCacheOptions {
  /** The enforcing service, the principal the decisions are asked as. */
  callerService: string;
  /**
   * How long an allow is reused. Governance reaches every replica within 2 s of a policy change;
   * the default 1 s keeps an enforcement point inside that promise.
   */
  ttlMs?: number;
  max?: number;
  /** Milliseconds on a monotonic clock (tests inject one); `performance.now` by default. */
  clock?: { now(): number };
}

/**
 * Governance decisions for a hot enforcement path: identical requests asked at once share one
 * call, and an `allow` is reused for `ttlMs`. Denies (and dryrun denies, which governance audits)
 * are not kept once answered: each later request asks again, so each is decided and recorded.
 */
export class DecisionCache {
  private readonly cache: LRUCache<string, Promise<DecisionResponse>>;
  private readonly caller: Principal;

  constructor(options: DecisionCacheOptions) {
    this.caller = servicePrincipal(options.callerService);
    this.cache = new LRUCache({
      max: options.max ?? 10_000,
      ttl: options.ttlMs ?? 1000,
      ...(options.clock ? { perf: options.clock, ttlResolution: 0 } : {}),
    });
  }

  /**
   * One decision. Asking governance is a `governance.decision` span of the current request (action
   * and outcome only); a reused answer costs no span, only `agentplane.governance.cached` on the
   * current one.
   */
  decide(governance: ServiceClient, request: DecisionRequest, requestId?: string): Promise<DecisionResponse> {
    const key = JSON.stringify([request.principal, request.action, request.resource, request.context ?? {}]);
    const hit = this.cache.get(key);
    if (hit) {
      annotateSpan({ "agentplane.governance.cached": true });
      return hit;
    }
    const attributes = { "agentplane.governance.action": request.action, "agentplane.governance.cached": false };
    return inChildSpan("governance.decision", attributes, async (span) => {
      const answer = await this.ask(governance, request, requestId, key);
      span.setAttributes({
        "agentplane.governance.decision": answer.decision,
        "agentplane.governance.enforced": answer.enforced,
      });
      return answer;
    });
  }

  private ask(
    governance: ServiceClient,
    request: DecisionRequest,
    requestId: string | undefined,
    key: string,
  ): Promise<DecisionResponse> {
    const value = callInternal(governance, internalDecideRoute, {
      principal: this.caller,
      body: request,
      ...(requestId ? { requestId } : {}),
    });
    this.cache.set(key, value);
    const forget = () => {
      if (this.cache.peek(key) === value) this.cache.delete(key);
    };
    value.then((answer) => {
      if (answer.decision !== "allow") forget();
    }, forget);
    return value;
  }

  /** Forgets every reused answer (a caller that learned of a policy change sooner). */
  clear(): void {
    this.cache.clear();
  }
}
