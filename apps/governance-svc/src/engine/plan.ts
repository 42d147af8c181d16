import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { LRUCache } from "lru-cache";
import type { CompiledBinding } from "./org-state.ts";

/** One statement of a bound policy version, as the engine evaluates it. */
export interface PlanStatement {
  /** `${bindingId}/${ruleId}`: the id Cedar reports it by. */
  key: string;
  binding: CompiledBinding;
  ruleId: string;
  effect: "permit" | "forbid";
  text: string;
  /** Looks at entity hierarchy or tags: the request must then carry its entities. */
  usesEntities: boolean;
}

/**
 * The statements of one combination of bindings that can match one action, indexed by a guard:
 * a `when` conjunct `context.a == <literal>` or `[<literals>].contains(context.a)` that the
 * statement cannot be satisfied without. A request only needs Cedar to look at the unguarded
 * statements and those whose guard its context meets; the others cannot apply (Cedar ignores an
 * unsatisfied statement whatever its effect), so leaving them out never changes the decision.
 */
export interface Plan {
  id: string;
  statements: PlanStatement[];
  always: number[];
  guards: Map<string, Map<string, number[]>>;
  /** The permits that could match the action: the rules to widen when none applied. */
  permits: PlanStatement[];
}

const ENTITY_USE = /\bin\b|hasTag|getTag|\bis\b/;

type Expr = Record<string, unknown>;

const contextAttr = (expr: unknown): string | undefined => {
  const dot = (expr as { "."?: { left: { Var?: string }; attr: string } } | null)?.["."];
  return dot && dot.left?.Var === "context" ? dot.attr : undefined;
};

/** The key a primitive literal (or context value) is indexed by; undefined for anything else. */
export function valueKey(value: unknown): string | undefined {
  if (typeof value === "string") return `s${value}`;
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "number" && Number.isInteger(value)) return `n${value}`;
  return undefined;
}

const literal = (expr: unknown): string | undefined => valueKey((expr as { Value?: unknown } | null)?.Value);

function guardOf(expr: Expr): { attr: string; values: string[] } | undefined {
  const and = expr["&&"] as { left: Expr; right: Expr } | undefined;
  if (and) return guardOf(and.left) ?? guardOf(and.right);
  const eq = expr["=="] as { left: Expr; right: Expr } | undefined;
  if (eq) {
    const [attr, value] = contextAttr(eq.left)
      ? [contextAttr(eq.left), literal(eq.right)]
      : [contextAttr(eq.right), literal(eq.left)];
    return attr && value ? { attr, values: [value] } : undefined;
  }
  const contains = expr.contains as { left: Expr; right: Expr } | undefined;
  if (contains) {
    const attr = contextAttr(contains.right);
    const set = (contains.left as { Set?: unknown[] }).Set;
    if (!attr || !set) return undefined;
    const values = set.map(literal);
    return values.every((v): v is string => v !== undefined) ? { attr, values } : undefined;
  }
  return undefined;
}

type Guard = { attr: string; values: string[] };

/**
 * Guards by statement text, bounded by the texts' size as well as their number: a statement can
 * be most of a 256 KiB body, and texts of versions no binding uses any more stay until evicted.
 */
const guardCache = new LRUCache<string, Guard | false>({
  max: 20_000,
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_guard, text) => text.length + 100,
});

/** The guard of a statement's text (memoized: the same text is the same statement in every version). */
export function statementGuard(text: string): Guard | undefined {
  let guard = guardCache.get(text);
  if (guard === undefined) {
    guard = false;
    const parsed = cedar.policyToJson(text);
    if (parsed.type === "success") {
      for (const clause of parsed.json.conditions) {
        if (clause.kind !== "when") continue;
        guard = guardOf(clause.body as unknown as Expr) ?? false;
        if (guard) break;
      }
    }
    guardCache.set(text, guard);
  }
  return guard || undefined;
}

/** The plan of a combination of bindings for one action. */
export function buildPlan(id: string, bindings: CompiledBinding[], action: string): Plan {
  const statements: PlanStatement[] = [];
  for (const binding of bindings) {
    for (const rule of binding.rules) {
      if (rule.actions !== null && !rule.actions.includes(action)) continue;
      statements.push({
        key: `${binding.id}/${rule.id}`,
        binding,
        ruleId: rule.id,
        effect: rule.effect,
        text: rule.text,
        usesEntities: ENTITY_USE.test(rule.text),
      });
    }
  }
  const always: number[] = [];
  const guards: Plan["guards"] = new Map();
  statements.forEach((statement, i) => {
    const guard = statementGuard(statement.text);
    if (!guard) {
      always.push(i);
      return;
    }
    let byValue = guards.get(guard.attr);
    if (!byValue) {
      byValue = new Map();
      guards.set(guard.attr, byValue);
    }
    for (const value of new Set(guard.values)) {
      const list = byValue.get(value);
      if (list) list.push(i);
      else byValue.set(value, [i]);
    }
  });
  return { id, statements, always, guards, permits: statements.filter((s) => s.effect === "permit") };
}

/** The statements of the plan a request's context can satisfy, as sorted indices. */
export function select(plan: Plan, context: Record<string, unknown>): number[] {
  if (plan.guards.size === 0) return plan.always;
  const out = [...plan.always];
  for (const [attr, byValue] of plan.guards) {
    const key = valueKey(context[attr]);
    const hits = key === undefined ? undefined : byValue.get(key);
    if (hits) out.push(...hits);
  }
  return out.sort((a, b) => a - b);
}
