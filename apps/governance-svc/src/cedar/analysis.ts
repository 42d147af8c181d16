import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { CompiledBinding } from "../engine/org-state.ts";

export interface Statement {
  key: string;
  binding: CompiledBinding;
  ruleId: string;
  effect: "permit" | "forbid";
  json: cedar.PolicyJson;
}

const jsonCache = new Map<string, cedar.PolicyJson>();

/** The statements of the bindings whose scope names the action (or every action). */
export function statementsFor(bindings: CompiledBinding[], action: string): Statement[] {
  const out: Statement[] = [];
  for (const binding of bindings) {
    for (const rule of binding.rules) {
      if (rule.actions !== null && !rule.actions.includes(action)) continue;
      let json = jsonCache.get(rule.text);
      if (!json) {
        const parsed = cedar.policyToJson(rule.text);
        if (parsed.type === "failure") continue;
        json = parsed.json;
        if (jsonCache.size > 10_000) jsonCache.clear();
        jsonCache.set(rule.text, json);
      }
      out.push({ key: `${binding.id}/${rule.id}`, binding, ruleId: rule.id, effect: rule.effect, json });
    }
  }
  return out;
}

export interface PartialRequest {
  action: string;
  resource: cedar.TypeAndId;
  entities: cedar.EntityJson[];
  context: cedar.Context;
}

/**
 * Cedar partial evaluation with the principal unknown: which statements certainly apply
 * (`satisfied`), which depend on the principal (`residual`), and the decision when it does not
 * depend on the principal at all.
 */
export function partial(
  statements: Statement[],
  request: PartialRequest,
  options: { scopeOnly?: boolean } = {},
): { decision: "allow" | "deny" | null; satisfied: Set<string>; residual: Set<string> } {
  const policies: Record<string, cedar.PolicyJson> = {};
  for (const s of statements) policies[s.key] = options.scopeOnly ? { ...s.json, conditions: [] } : s.json;
  const answer = cedar.isAuthorizedPartial({
    principal: null,
    action: { type: "Action", id: request.action },
    resource: request.resource,
    context: request.context,
    policies: { staticPolicies: policies },
    entities: request.entities,
  });
  if (answer.type === "failure") return { decision: null, satisfied: new Set(), residual: new Set() };
  return {
    decision: answer.response.decision,
    satisfied: new Set(answer.response.satisfied),
    residual: new Set(answer.response.nontrivialResiduals),
  };
}

export interface ActionSummary {
  decision: "allow" | "deny" | "conditional";
  ruleIds: string[];
}

/**
 * What an action resolves to for a resource, whoever asks and whatever the request's details:
 * a statement whose scope certainly applies and has no condition decides unconditionally; one
 * with conditions (or a principal constraint) makes the answer conditional.
 */
export function summarize(statements: Statement[], request: Omit<PartialRequest, "context">): ActionSummary {
  const scoped = partial(statements, { ...request, context: {} }, { scopeOnly: true });
  const applies = statements.filter((s) => scoped.satisfied.has(s.key) || scoped.residual.has(s.key));
  const unconditional = (s: Statement) => scoped.satisfied.has(s.key) && s.json.conditions.length === 0;
  const forbids = applies.filter((s) => s.effect === "forbid");
  const permits = applies.filter((s) => s.effect === "permit");
  const hardForbids = forbids.filter(unconditional);
  if (hardForbids.length > 0) return { decision: "deny", ruleIds: hardForbids.map((s) => s.ruleId) };
  if (permits.length === 0) return { decision: "deny", ruleIds: ["default-deny"] };
  const hardPermits = permits.filter(unconditional);
  if (hardPermits.length > 0 && forbids.length === 0)
    return { decision: "allow", ruleIds: hardPermits.map((s) => s.ruleId) };
  return { decision: "conditional", ruleIds: [...permits, ...forbids].map((s) => s.ruleId) };
}

function isContextHost(expr: cedar.Expr): boolean {
  const dot = (expr as { ".": { left: cedar.Expr; attr: string } })["."];
  return !!dot && dot.attr === "host" && (dot.left as { Var?: string }).Var === "context";
}

/** Host names and `like` patterns a condition compares `context.host` with. */
export function hostPatterns(expr: cedar.Expr, out: Set<string> = new Set()): Set<string> {
  if (typeof expr !== "object" || expr === null) return out;
  const eq = (expr as { "==": { left: cedar.Expr; right: cedar.Expr } })["=="];
  if (eq) {
    const [hostSide, value] = isContextHost(eq.left) ? [eq.left, eq.right] : [eq.right, eq.left];
    const literal = (value as { Value?: unknown }).Value;
    if (isContextHost(hostSide) && typeof literal === "string") out.add(literal);
  }
  const like = (expr as { like: { left: cedar.Expr; pattern: cedar.PatternElem[] } }).like;
  if (like && isContextHost(like.left)) {
    out.add(like.pattern.map((p) => (p === "Wildcard" ? "*" : p.Literal)).join(""));
  }
  const contains = (expr as { contains: { left: cedar.Expr; right: cedar.Expr } }).contains;
  if (contains && isContextHost(contains.right)) {
    const set = (contains.left as { Set?: cedar.Expr[] }).Set ?? [];
    for (const item of set) {
      const v = (item as { Value?: unknown }).Value;
      if (typeof v === "string") out.add(v);
    }
  }
  for (const value of Object.values(expr as Record<string, unknown>)) {
    if (Array.isArray(value)) for (const v of value) hostPatterns(v as cedar.Expr, out);
    else if (typeof value === "object" && value !== null) hostPatterns(value as cedar.Expr, out);
  }
  return out;
}
