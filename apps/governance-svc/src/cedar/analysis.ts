import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { CompiledBinding } from "../engine/org-state.ts";
import { cedarContext } from "./request.ts";

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
): { decision: "allow" | "deny" | null; satisfied: Set<string>; residual: Set<string> } {
  const policies: Record<string, cedar.PolicyJson> = {};
  for (const s of statements) policies[s.key] = s.json;
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

/** Every attribute of an action's context as a Cedar unknown, named after it. */
function unknownContext(action: string): cedar.Context {
  const attributes = Object.keys(cedarContext(action, {}));
  return Object.fromEntries(attributes.map((name) => [name, { __extn: { fn: "unknown", arg: `context.${name}` } }]));
}

/**
 * What an action resolves to for a resource, whoever asks and whatever the request's details:
 * Cedar partial evaluation with the principal and every context attribute unknown. A decision
 * Cedar reaches anyway is `allow` or `deny` with the statements that must determine it (no permit
 * at all is `default-deny`); otherwise the answer is `conditional` on the statements whose
 * residuals may determine it.
 */
export function summarize(statements: Statement[], request: Omit<PartialRequest, "context">): ActionSummary {
  const byKey = new Map(statements.map((s) => [s.key, s]));
  const policies: Record<string, cedar.PolicyJson> = {};
  for (const s of statements) policies[s.key] = s.json;
  const answer = cedar.isAuthorizedPartial({
    principal: null,
    action: { type: "Action", id: request.action },
    resource: request.resource,
    context: unknownContext(request.action),
    policies: { staticPolicies: policies },
    entities: request.entities,
  });
  if (answer.type === "failure") {
    return { decision: "conditional", ruleIds: statements.map((s) => s.ruleId) };
  }
  const ruleIds = (keys: string[]) => [...new Set(keys.flatMap((k) => byKey.get(k)?.ruleId ?? []))];
  const { decision, mustBeDetermining, mayBeDetermining } = answer.response;
  if (decision === null) return { decision: "conditional", ruleIds: ruleIds(mayBeDetermining) };
  const deciding = ruleIds(mustBeDetermining);
  if (decision === "deny" && deciding.length === 0) return { decision: "deny", ruleIds: ["default-deny"] };
  return { decision, ruleIds: deciding };
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
