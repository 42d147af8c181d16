import { type EffectivePolicy, GOVERNED_ACTIONS, type SandboxSummary } from "@agentplane/contracts";
import type * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { hostPatterns, type Statement, statementsFor, summarize } from "../cedar/analysis.ts";
import type { GovernanceContext } from "../context.ts";
import { bindingReaches, type CompiledBinding, type OrgState } from "../engine/org-state.ts";

export const SANDBOX_ACTIONS = GOVERNED_ACTIONS.filter((a) => a.startsWith("sandbox:"));

/** The Cedar resource of a sandbox, with its project and organization as parents and labels as tags. */
export function sandboxEntities(sandbox: SandboxSummary): { resource: cedar.TypeAndId; entities: cedar.EntityJson[] } {
  const resource = { type: "Sandbox", id: sandbox.id };
  const project = { type: "Project", id: sandbox.projectId };
  const org = { type: "Organization", id: sandbox.orgId };
  return {
    resource,
    entities: [
      { uid: resource, attrs: {}, parents: [project], tags: { ...sandbox.labels } },
      { uid: project, attrs: {}, parents: [org] },
      { uid: org, attrs: {}, parents: [] },
    ],
  };
}

export function bindingsReachingSandbox(
  state: Pick<OrgState, "bindings" | "projectLabels">,
  sandbox: SandboxSummary,
): CompiledBinding[] {
  return state.bindings.filter((b) =>
    bindingReaches(b, { projectId: sandbox.projectId, kind: "sandbox", labels: sandbox.labels }, state.projectLabels),
  );
}

/**
 * The bindings that reach a sandbox and, per sandbox action, what it resolves to whoever asks:
 * `allow`, `deny` or `conditional` with the deciding rule ids (Cedar partial evaluation with the
 * principal unknown). Enforced bindings decide; an action only dryrun bindings cover reports them.
 */
export async function effectivePolicy(ctx: GovernanceContext, sandbox: SandboxSummary): Promise<EffectivePolicy> {
  const state = await ctx.engine.state(sandbox.orgId);
  const reaching = bindingsReachingSandbox(state, sandbox);
  const { resource, entities } = sandboxEntities(sandbox);
  const actions: EffectivePolicy["actions"] = [];
  let egressStatements: Statement[] = [];
  let egressDecision: "allow" | "deny" | "conditional" | undefined;
  for (const action of SANDBOX_ACTIONS) {
    const enforce = statementsFor(
      reaching.filter((b) => b.mode === "enforce"),
      action,
    );
    const statements = enforce.length > 0 ? enforce : statementsFor(reaching, action);
    if (statements.length === 0) {
      // Governance is opt-in per action, except egress: a sandbox has no way out until a policy
      // permits hosts, so the egress proxy refuses every destination (docs/sandboxes.md, "Egress").
      actions.push({ action, decision: action === "sandbox:egress" ? "deny" : "allow", governed: false, ruleIds: [] });
      continue;
    }
    const summary = summarize(statements, { action, resource, entities });
    const mode = enforce.length > 0 ? "enforce" : "dryrun";
    actions.push({ action, decision: summary.decision, governed: true, ruleIds: summary.ruleIds, mode });
    if (action === "sandbox:egress" && mode === "enforce") {
      egressStatements = statements;
      egressDecision = summary.decision;
    }
  }
  const allowed = new Set<string>();
  const denied = new Set<string>();
  for (const s of egressStatements) {
    for (const clause of s.json.conditions) hostPatterns(clause.body, s.effect === "permit" ? allowed : denied);
  }
  // Without an enforced egress policy the sandbox has no route out: the proxy exists only when a policy permits hosts.
  const access =
    egressDecision === undefined || egressDecision === "deny"
      ? "none"
      : egressDecision === "allow"
        ? "all"
        : allowed.size > 0
          ? "listed"
          : "conditional";
  return {
    sandboxId: sandbox.id,
    projectId: sandbox.projectId,
    bindings: reaching.map((b) => ({
      bindingId: b.id,
      scope: b.scope,
      policyId: b.policyId,
      policyName: b.policyName,
      version: b.version,
      pinned: b.pinned,
      mode: b.mode,
      target: b.target as EffectivePolicy["bindings"][number]["target"],
    })),
    actions,
    egress: { access, allowedHosts: [...allowed].sort(), deniedHosts: [...denied].sort() },
    evaluatedAt: new Date().toISOString(),
  };
}
