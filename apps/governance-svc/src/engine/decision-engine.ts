import type { DecisionReason, DecisionRequest, DecisionResponse } from "@agentplane/contracts";
import type { Logger } from "@agentplane/service-kit";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { type CedarCall, cedarCall } from "../cedar/request.ts";
import type { GovernanceDb } from "../db/schema.ts";
import { bindingReaches, type CompiledBinding, coversAction, loadOrgState, type OrgState } from "./org-state.ts";
import { buildPlan, type Plan, type PlanStatement, select } from "./plan.ts";

export interface EngineOptions {
  /** A cached organization is reloaded in the background after this long (default 60 s), a safety net behind the bus. */
  refreshAfterMs?: number;
  /** Memoized Cedar answers (identical requests against the same policy set) kept (default 20,000). */
  memoSize?: number;
  /** Preparsed Cedar policy sets kept (default 1,000). */
  preparedSets?: number;
  /**
   * Size of the organizations' states kept, in characters of their statements (default 64 Mi):
   * the least recently used are dropped past it, and reloaded when they decide again.
   */
  stateMaxChars?: number;
}

/** A preparsed Cedar policy set: some statements of a plan, in a slot of Cedar's store. */
interface PreparedSet {
  key: string;
  slot: string;
  needsEntities: boolean;
}

/** The bindings a kind of request meets, and what Cedar evaluates for it. */
interface Resolution {
  reaching: CompiledBinding[];
  enforce: CompiledBinding[];
  enforcePlan: Plan | undefined;
  /** Enforced and dryrun bindings together, when some are dryrun. */
  allPlan: Plan | undefined;
  policies: NonNullable<DecisionResponse["policies"]>;
}

/**
 * Answers decisions from memory: each organization's bindings are loaded once (then refreshed on
 * a change notice or after `refreshAfterMs`), the bindings a request meets are looked up once per
 * kind of request, each combination of binding versions is planned once per action, the statements
 * a request can satisfy are preparsed once into Cedar's thread-local store, and identical requests
 * are memoized per policy set.
 */
export class DecisionEngine {
  private readonly db: Kysely<GovernanceDb>;
  private readonly logger: Logger;
  private readonly refreshAfterMs: number;
  /**
   * Loaded states by organization. Each costs memory for its bound statements (up to 1 MiB of
   * Cedar, each binding counting its own copy); every organization that ever decided stayed.
   */
  private readonly orgs: LRUCache<string, Promise<OrgState>>;
  private readonly plans = new LRUCache<string, Plan>({ max: 2_000 });
  private readonly freeSlots: string[] = [];
  private slots = 0;
  private readonly prepared: LRUCache<string, PreparedSet>;
  private readonly memo: LRUCache<string, cedar.Response>;
  private generation = 0;

  constructor(db: Kysely<GovernanceDb>, logger: Logger, options: EngineOptions = {}) {
    this.db = db;
    this.logger = logger;
    this.refreshAfterMs = options.refreshAfterMs ?? 60_000;
    this.orgs = new LRUCache({
      max: 100_000,
      maxSize: options.stateMaxChars ?? 64 * 1024 * 1024,
      // A state still loading counts 1; load() measures it once loaded.
      sizeCalculation: () => 1,
    });
    // Bounded by size as well as count: a key holds the request's context, and an exec's command
    // line can be near the 1 MiB body limit; 20,000 such keys would hold gigabytes.
    this.memo = new LRUCache({
      max: options.memoSize ?? 20_000,
      maxSize: MEMO_MAX_CHARS,
      maxEntrySize: MEMO_MAX_ENTRY_CHARS,
      sizeCalculation: (_answer, key) => key.length + 100,
    });
    this.prepared = new LRUCache({
      max: options.preparedSets ?? 1_000,
      dispose: (set) => this.freeSlots.push(set.slot),
    });
  }

  /** The organization's bindings as decisions see them (loaded on first use, then from memory). */
  async state(orgId: string): Promise<OrgState> {
    let entry = this.orgs.get(orgId);
    if (!entry) {
      entry = this.load(orgId);
      this.orgs.set(orgId, entry);
      return entry;
    }
    const state = await entry;
    if (Date.now() - state.loadedAt > this.refreshAfterMs && this.orgs.get(orgId) === entry) {
      // Stale-while-revalidate: this decision uses what is in memory; the next sees the reload.
      const reload = this.load(orgId);
      reload.then(
        (fresh) => {
          if (this.orgs.peek(orgId) === entry) this.orgs.set(orgId, reload, { size: stateSize(fresh) });
        },
        () => {},
      );
    }
    return state;
  }

  private load(orgId: string): Promise<OrgState> {
    const generation = this.generation;
    const loading = loadOrgState(this.db, orgId);
    loading.then(
      (state) => {
        // Counted at its size once known (set again: the cache does not re-measure the same value).
        if (this.orgs.peek(orgId) !== loading) return;
        this.orgs.delete(orgId);
        this.orgs.set(orgId, loading, { size: stateSize(state) });
      },
      () => {},
    );
    loading.catch((err) => {
      this.logger.warn({ err: (err as Error).message, orgId }, "governance state not loaded");
      if (this.orgs.get(orgId) === loading && generation === this.generation) this.orgs.delete(orgId);
    });
    return loading;
  }

  /** Forgets an organization's state (a policy or binding changed); the next decision reloads it. */
  invalidate(orgId: string): void {
    this.generation++;
    this.orgs.delete(orgId);
    this.memo.clear();
    // Loaded eagerly so the next decision does not wait for the database.
    this.orgs.set(orgId, this.load(orgId));
  }

  invalidateAll(): void {
    this.generation++;
    this.orgs.clear();
    this.memo.clear();
  }

  async decide(request: DecisionRequest): Promise<DecisionResponse> {
    const call = cedarCall(request);
    const state = await this.state(request.resource.orgId);
    const resolution = this.resolve(state, request);
    const evaluatedAt = new Date().toISOString();
    const policies = resolution.policies;
    if (resolution.reaching.length === 0)
      return { decision: "allow", enforced: true, reasons: [], evaluatedAt, policies };
    if (resolution.enforcePlan) {
      const outcome = this.evaluate(resolution.enforcePlan, resolution.enforce, call);
      if (outcome.decision === "deny")
        return { decision: "deny", enforced: true, reasons: outcome.reasons, evaluatedAt, policies };
    }
    if (resolution.allPlan) {
      const outcome = this.evaluate(resolution.allPlan, resolution.reaching, call);
      if (outcome.decision === "deny") {
        const dryrunOnly = outcome.reasons.filter((r) => r.mode === "dryrun");
        return {
          decision: "deny",
          enforced: false,
          reasons: dryrunOnly.length > 0 ? dryrunOnly : outcome.reasons,
          evaluatedAt,
          policies,
        };
      }
    }
    return { decision: "allow", enforced: true, reasons: [], evaluatedAt, policies };
  }

  /**
   * The bindings that reach a request's resource and cover its action, with their plans: looked
   * up once per (action, project, kind, labels) for each loaded state of the organization.
   */
  private resolve(state: OrgState, request: DecisionRequest): Resolution {
    const { resource, action } = request;
    const labels = state.selectsLabels ? labelsKey(resource.labels) : "";
    const key = `${action}\u0000${resource.projectId ?? ""}\u0000${resource.kind ?? ""}\u0000${labels}`;
    const cached = state.lookups.get(key) as Resolution | undefined;
    if (cached) return cached;
    const reaching = state.bindings.filter(
      (b) => bindingReaches(b, resource, state.projectLabels) && coversAction(b, action),
    );
    const enforce = reaching.filter((b) => b.mode === "enforce");
    const resolution: Resolution = {
      reaching,
      enforce,
      enforcePlan: enforce.length > 0 ? this.plan(enforce, action) : undefined,
      allPlan: enforce.length < reaching.length ? this.plan(reaching, action) : undefined,
      policies: reaching.map((b) => ({ bindingId: b.id, policyId: b.policyId, version: b.version, mode: b.mode })),
    };
    if (state.lookups.size >= MAX_LOOKUPS) state.lookups.clear();
    state.lookups.set(key, resolution);
    return resolution;
  }

  private plan(bindings: CompiledBinding[], action: string): Plan {
    const id = `${bindings.map((b) => `${b.id}@${b.version}:${b.mode}`).join(",")}\u0000${action}`;
    let plan = this.plans.get(id);
    if (!plan) {
      plan = buildPlan(id, bindings, action);
      this.plans.set(id, plan);
    }
    return plan;
  }

  /** Cedar over the statements of the plan the request can satisfy: forbid beats permit, no permit is a deny. */
  evaluate(
    plan: Plan,
    bindings: CompiledBinding[],
    call: CedarCall,
  ): { decision: "allow" | "deny"; reasons: DecisionReason[] } {
    const selected = select(plan, call.context as Record<string, unknown>);
    let response: cedar.Response | undefined;
    if (selected.length === 0) {
      response = NOTHING_APPLIES;
    } else {
      const set = this.prepare(plan, selected);
      // Everything Cedar sees is in the key: a statement may name the principal or the resource.
      const memoKey = `${set.key}\u0000${call.principal.type}:${call.principal.id}\u0000${call.resource.type}:${call.resource.id}\u0000${set.needsEntities ? JSON.stringify(call.entities) : ""}\u0000${JSON.stringify(call.context)}`;
      response = this.memo.get(memoKey);
      if (!response) {
        const answer = cedar.statefulIsAuthorized({
          principal: call.principal,
          action: call.action,
          resource: call.resource,
          context: call.context,
          preparsedPolicySetId: set.slot,
          entities: set.needsEntities ? call.entities : [],
        });
        if (answer.type === "failure") {
          // A request Cedar cannot evaluate is denied: the safe answer for an enforcement point.
          this.logger.warn({ errors: answer.errors.map((e) => e.message) }, "cedar evaluation failed");
          response = { decision: "deny", diagnostics: { reason: [], errors: [] } };
        } else {
          response = answer.response;
        }
        this.memo.set(memoKey, response);
      }
    }
    if (response.decision === "allow") return { decision: "allow", reasons: [] };
    const reasonOf = (binding: CompiledBinding, ruleId: string): DecisionReason => ({
      policyId: binding.policyId,
      version: binding.version,
      ruleId,
      bindingId: binding.id,
      mode: binding.mode,
    });
    const forbids = response.diagnostics.reason.flatMap((key) => {
      const statement = plan.statements.find((s) => s.key === key);
      return statement ? [{ ...reasonOf(statement.binding, statement.ruleId), forbid: true }] : [];
    });
    if (forbids.length > 0) return { decision: "deny", reasons: forbids };
    // No permit applied: name the permits that cover the action (the rules to widen), or the bindings.
    if (plan.permits.length > 0)
      return { decision: "deny", reasons: plan.permits.map((s) => reasonOf(s.binding, s.ruleId)) };
    return { decision: "deny", reasons: bindings.map((b) => reasonOf(b, "default-deny")) };
  }

  /**
   * The preparsed Cedar policy set of some statements of a plan. Sets live in Cedar's thread-local
   * store, which has no removal: a set evicted from the cache leaves its slot id to the next one,
   * whose preparse replaces it, so the store stays bounded.
   */
  private prepare(plan: Plan, selected: number[]): PreparedSet {
    const key = selected === plan.always ? `${plan.id}#*` : `${plan.id}#${selected.join(".")}`;
    const existing = this.prepared.get(key);
    if (existing) return existing;
    const statements: Record<string, string> = {};
    let needsEntities = false;
    for (const i of selected) {
      const statement = plan.statements[i] as PlanStatement;
      statements[statement.key] = statement.text;
      if (statement.usesEntities) needsEntities = true;
    }
    const slot = this.freeSlots.pop() ?? `ps${++this.slots}`;
    const parsed = cedar.preparsePolicySet(slot, { staticPolicies: statements });
    if (parsed.type === "failure") {
      this.freeSlots.push(slot);
      throw new Error(`stored policy set did not parse: ${parsed.errors[0]?.message}`);
    }
    const set = { key, slot, needsEntities };
    this.prepared.set(key, set);
    return set;
  }
}

const MAX_LOOKUPS = 10_000;
/** Characters of memo keys kept in all, and in one (a longer request is answered, not memoized). */
const MEMO_MAX_CHARS = 32 * 1024 * 1024;
const MEMO_MAX_ENTRY_CHARS = 64 * 1024;
const NOTHING_APPLIES: cedar.Response = { decision: "deny", diagnostics: { reason: [], errors: [] } };

/** About what a state holds, in characters: its statements' texts, and some for each binding and project. */
function stateSize(state: OrgState): number {
  let size = 1000 + state.projectLabels.size * 200;
  for (const binding of state.bindings) {
    size += 500;
    for (const rule of binding.rules) size += rule.text.length + 100;
  }
  return size;
}

function labelsKey(labels: Record<string, string> | undefined): string {
  if (!labels) return "";
  const keys = Object.keys(labels);
  if (keys.length === 0) return "";
  return JSON.stringify(keys.sort().map((k) => [k, labels[k]]));
}
