import {
  type DecisionReason,
  type DecisionResponse,
  type EffectivePolicy,
  getSandboxEffectivePolicyRoute,
  type Principal,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { LRUCache } from "lru-cache";
import type { SandboxDeps } from "../services/context.ts";
import { blockingReasons, decide } from "../services/policy.ts";
import { type EgressFacts, sandboxPrincipal } from "./facts.ts";
import type { EgressVerdict } from "./proxy.ts";
import { RefusalWindow } from "./refusal-window.ts";

/**
 * What deciding egress needs: governance, the sandbox's facts and a place to record refusals (the
 * sandbox schema in sandbox-svc, sandbox-svc's internal API in the egress deployable), and the
 * window that bounds repeated refusal records (one per service).
 */
export type EgressDeps = Pick<SandboxDeps, "governance" | "logger"> & { facts: EgressFacts; refusals?: RefusalWindow };

const sharedRefusals = new RefusalWindow();

/** A dryrun deny proceeds, as everywhere; an enforced one names its rule. */
export function egressVerdict(response: DecisionResponse): EgressVerdict {
  const policies = (response.policies ?? []).map(({ bindingId, policyId, version }) => ({
    bindingId,
    policyId,
    version,
  }));
  if (response.decision === "allow" || !response.enforced) return { allowed: true, policies };
  const reasons = blockingReasons(response);
  return reasons[0] ? { allowed: false, ruleId: reasons[0].ruleId, policies } : { allowed: false, policies };
}

/** How long a sandbox's "is egress governed at all" answer is reused (governance propagates changes within 2 s). */
const GOVERNED_TTL_MS = 2000;
const governedCache = new LRUCache<string, boolean>({ max: 10_000, ttl: GOVERNED_TTL_MS });

function unavailable(): ProblemError {
  return new ProblemError("service-unavailable", {
    detail: "The policy service is unavailable; retry shortly",
    headers: { "retry-after": "2" },
  });
}

/**
 * Egress is closed unless a bound policy opens it. The decision API allows an action that no
 * binding covers (governance is opt-in per action family), which for egress would mean "anywhere";
 * so the proxy first asks the sandbox's effective policy whether any binding governs
 * `sandbox:egress` for it (reused for 2 s), then decides each destination.
 */
async function egressGoverned(deps: EgressDeps, principal: Principal, projectId: string): Promise<boolean> {
  const sandboxId = principal.sandboxId as string;
  const cached = governedCache.get(sandboxId);
  if (cached !== undefined) return cached;
  const governance = deps.governance;
  if (!governance) return false;
  const path = getSandboxEffectivePolicyRoute.path
    .replace("{projectId}", encodeURIComponent(projectId))
    .replace("{sandboxId}", encodeURIComponent(sandboxId));
  let effective: EffectivePolicy;
  try {
    effective = await governance.request<EffectivePolicy>("GET", path, { principal });
  } catch (err) {
    deps.logger.warn({ err, sandboxId }, "effective policy for egress unavailable");
    throw unavailable();
  }
  const summary = effective.actions?.find((a) => a.action === "sandbox:egress");
  const governed = summary?.governed === true && effective.egress?.access !== "none";
  governedCache.set(sandboxId, governed);
  return governed;
}

/**
 * One destination of one sandbox, asked of governance as `sandbox:egress` by the sandbox itself on
 * the resource `Host::"<name>"` (with the sandbox's labels, so bindings that select sandboxes by
 * label apply), context `{host, port, platform}`. A refusal is audited with the rule that refused it.
 *
 * The platform's own API (`platform`) is open by default, governed or not: only an enforced rule
 * that names it (a `forbid`, e.g. `when { context.platform }`) closes it; "no permit matched"
 * does not, so a policy that opens egress to a registry does not cut a sandbox off its platform.
 */
export async function decideEgress(
  deps: EgressDeps,
  sandboxId: string,
  host: string,
  port: number,
  platform = false,
): Promise<EgressVerdict> {
  if (!deps.governance) return { allowed: false };
  const row = await deps.facts.sandbox(sandboxId);
  if (!row) return { allowed: false };
  const principal = sandboxPrincipal(sandboxId, row.projectId, row.orgId);
  const governed = await egressGoverned(deps, principal, row.projectId);
  if (!governed && platform) return { allowed: true };
  if (!governed) {
    await refuse(deps, row.id, host, port, undefined, []);
    return { allowed: false, detail: `No policy permits egress from this sandbox (to ${host}:${port})` };
  }
  const response = await decide(deps, {
    principal,
    action: "sandbox:egress",
    resource: {
      type: "Host",
      id: host,
      orgId: row.orgId,
      projectId: row.projectId,
      labels: row.labels,
      kind: "sandbox",
    },
    context: { host, port, platform },
  });
  let verdict: EgressVerdict = response ? egressVerdict(response) : { allowed: false };
  if (platform && response && !verdict.allowed) {
    // Only a forbid that matched closes the platform; "no permit applied" leaves it open.
    const forbids = blockingReasons(response).filter((r) => r.forbid === true);
    verdict = forbids[0]
      ? { allowed: false, ruleId: forbids[0].ruleId, policies: verdict.policies ?? [] }
      : { allowed: true, policies: verdict.policies ?? [] };
  }
  if (!verdict.allowed) {
    await refuse(deps, row.id, host, port, verdict.ruleId, response ? blockingReasons(response) : [], verdict.policies);
  }
  return verdict;
}

/**
 * Records a refusal the proxy made itself after the policy allowed (a name on a private address,
 * refused whatever the policy says), as `sandbox.egress_denied` with `reason`.
 */
export async function recordEgressRefusal(
  deps: EgressDeps,
  sandboxId: string,
  host: string,
  port: number,
  reason: string,
): Promise<void> {
  await refuse(deps, sandboxId, host, port, undefined, [], [], reason);
}

/**
 * The sandbox-side record of a refused connection (governance records the decision itself). Within
 * a window only the first refusal of a (sandbox, host, port, rule or reason) is recorded; its
 * repeats are counted and summarised in one record (`repeats`, `windowSeconds`) when it ends.
 */
async function refuse(
  deps: EgressDeps,
  sandboxId: string,
  host: string,
  port: number,
  ruleId: string | undefined,
  reasons: DecisionReason[],
  policies: EgressVerdict["policies"] = [],
  reason = "no policy permits egress from this sandbox",
): Promise<void> {
  const key = JSON.stringify([sandboxId, host, port, ruleId ?? reason]);
  const refusals = deps.refusals ?? sharedRefusals;
  await refusals.refused(key, async (summary) => {
    await deps.facts.recordRefusal({
      sandboxId,
      host,
      port,
      ruleId: ruleId ?? null,
      reasons: reasons.map((r) => ({
        policyId: r.policyId,
        version: r.version,
        ruleId: r.ruleId,
        bindingId: r.bindingId,
      })),
      // The policy versions the refusal was decided under.
      policies,
      ...(ruleId ? {} : { reason }),
      ...(summary ?? {}),
    });
  });
}
