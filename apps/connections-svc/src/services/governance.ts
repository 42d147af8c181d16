import {
  type CredentialKind,
  type DecisionRequest,
  type DecisionResponse,
  internalFindCredentialsRoute,
  internalResolveCredentialRoute,
  type Principal,
  ResolveCredentialResponse,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, DecisionCache, servicePrincipal } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../context.ts";

const CALLER = servicePrincipal("connections");

/**
 * The proxies' decisions, one cache per service instance: an `allow` is reused for 1 s (inside
 * governance's 2 s propagation promise), identical decisions in flight share one call, and a deny
 * is asked every time (so every deny is decided, audited and answered with its rule).
 */
const decisionCaches = new WeakMap<ConnectionsContext, DecisionCache>();
function decisionCache(ctx: ConnectionsContext): DecisionCache {
  let cache = decisionCaches.get(ctx);
  if (!cache) {
    cache = new DecisionCache({ callerService: "connections", ttlMs: 1000 });
    decisionCaches.set(ctx, cache);
  }
  return cache;
}

/** With no governance deployed there are no policies: everything is allowed, and said so. */
const NO_POLICIES: Omit<DecisionResponse, "evaluatedAt"> = { decision: "allow", enforced: false, reasons: [] };

/** Asks governance's one decision API (an allow asked again within 1 s is answered from the cache). */
export async function decide(
  ctx: ConnectionsContext,
  request: DecisionRequest,
  requestId?: string,
): Promise<DecisionResponse> {
  if (!ctx.governance) return { ...NO_POLICIES, evaluatedAt: new Date().toISOString() };
  return decisionCache(ctx).decide(ctx.governance, request, requestId);
}

/** The deciding rule of a deny that is enforced, or undefined when the request may proceed. */
export function enforcedDeny(
  decision: DecisionResponse,
): { ruleId: string; policyId: string } | { ruleId: undefined } | undefined {
  if (decision.decision === "allow" || !decision.enforced) return undefined;
  const reason = decision.reasons.find((r) => r.mode === "enforce") ?? decision.reasons[0];
  return reason ? { ruleId: reason.ruleId, policyId: reason.policyId } : { ruleId: undefined };
}

/** The 403 problem of a policy deny, naming the rule. */
export function policyDenied(action: string, deny: { ruleId: string | undefined; policyId?: string }): ProblemError {
  return new ProblemError("policy-denied", {
    detail: deny.ruleId ? `${action} is denied by policy rule ${deny.ruleId}` : `${action} is denied by policy`,
    extensions: {
      action,
      ...(deny.ruleId ? { ruleId: deny.ruleId } : {}),
      ...("policyId" in deny && deny.policyId ? { policyId: deny.policyId } : {}),
    },
  });
}

/** A governance credential's fields, resolved for this project only (never logged or returned). */
export async function resolveCredential(
  ctx: ConnectionsContext,
  credentialId: string,
  projectId: string,
): Promise<ResolveCredentialResponse> {
  if (!ctx.governance) {
    throw new ProblemError("service-unavailable", { detail: "Credentials need the governance service" });
  }
  const body = await callInternal(ctx.governance, internalResolveCredentialRoute, {
    principal: CALLER,
    body: { credentialId, projectId },
  });
  return ResolveCredentialResponse.parse(body);
}

/**
 * Whether `credentialId` is a credential of `projectId` of one of `kinds` (metadata only: nothing
 * is decrypted, no role is assumed). True when no governance is deployed: there is nothing to ask.
 */
export async function projectHasCredential(
  ctx: ConnectionsContext,
  projectId: string,
  credentialId: string,
  kinds: CredentialKind[],
): Promise<boolean> {
  if (!ctx.governance) return true;
  const found = await callInternal(ctx.governance, internalFindCredentialsRoute, {
    principal: CALLER,
    body: { projectId, kinds, ids: [credentialId] },
  });
  return found.items.some((item) => item.id === credentialId);
}

export type { Principal };
