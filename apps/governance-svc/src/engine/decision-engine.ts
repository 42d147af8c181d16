import type { DecisionReason, DecisionRequest, DecisionResponse } from "@agentplane/contracts";
import type { Logger } from "@agentplane/service-kit";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { type CedarCall, cedarCall } from "../cedar/request.ts";
import type { GovernanceDb } from "../db/schema.ts";
import { bindingReaches, type CompiledBinding, coversAction, loadOrgState, type OrgState } from "./org-state.ts";

export interface EngineOptions {
  /** A cached organization is reloaded in the background after this long (default 60 s), a safety net behind the bus. */
  refreshAfterMs?: number;
  /** Memoized Cedar answers (identical requests against the same policy set) kept (default 20,000). */
  memoSize?: number;
}

interface PreparedSet {
  id: string;
  /** `${bindingId}/${ruleId}` → where the statement came from. */
  origin: Map<string, { binding: CompiledBinding; ruleId: string; effect: "permit" | "forbid" }>;
  /** False when no statement looks at entity hierarchy or tags: the request then carries no entities. */
  needsEntities: boolean;
}

const ENTITY_USE = /\bin\b|hasTag|getTag|\bis\b/;

/**
 * Answers decisions from memory: each organization's bindings are loaded once (then refreshed on
 * a change notice or after `refreshAfterMs`), each combination of binding versions is preparsed
 * once into Cedar's thread-local store, and identical requests are memoized per policy set.
 */
export class DecisionEngine {
  private readonly db: Kysely<GovernanceDb>;
  private readonly logger: Logger;
  private readonly refreshAfterMs: number;
  private readonly orgs = new Map<string, Promise<OrgState>>();
  private readonly prepared = new Map<string, PreparedSet>();
  private readonly memo: LRUCache<string, cedar.Response>;
  private generation = 0;

  constructor(db: Kysely<GovernanceDb>, logger: Logger, options: EngineOptions = {}) {
    this.db = db;
    this.logger = logger;
    this.refreshAfterMs = options.refreshAfterMs ?? 60_000;
    this.memo = new LRUCache({ max: options.memoSize ?? 20_000 });
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
        () => {
          if (this.orgs.get(orgId) === entry) this.orgs.set(orgId, reload);
        },
        () => {},
      );
    }
    return state;
  }

  private load(orgId: string): Promise<OrgState> {
    const generation = this.generation;
    const loading = loadOrgState(this.db, orgId);
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
    const reaching = state.bindings.filter(
      (b) => bindingReaches(b, request.resource) && coversAction(b, request.action),
    );
    const evaluatedAt = new Date().toISOString();
    if (reaching.length === 0) return { decision: "allow", enforced: true, reasons: [], evaluatedAt };
    const enforce = reaching.filter((b) => b.mode === "enforce");
    if (enforce.length > 0) {
      const outcome = this.evaluate(enforce, call);
      if (outcome.decision === "deny")
        return { decision: "deny", enforced: true, reasons: outcome.reasons, evaluatedAt };
    }
    if (enforce.length < reaching.length) {
      const outcome = this.evaluate(reaching, call);
      if (outcome.decision === "deny") {
        const dryrunOnly = outcome.reasons.filter((r) => r.mode === "dryrun");
        return {
          decision: "deny",
          enforced: false,
          reasons: dryrunOnly.length > 0 ? dryrunOnly : outcome.reasons,
          evaluatedAt,
        };
      }
    }
    return { decision: "allow", enforced: true, reasons: [], evaluatedAt };
  }

  /** Cedar over the union of the bindings' statements: forbid beats permit, no permit is a deny. */
  evaluate(bindings: CompiledBinding[], call: CedarCall): { decision: "allow" | "deny"; reasons: DecisionReason[] } {
    const set = this.prepare(bindings);
    const memoKey = `${set.id}\u0000${call.action.id}\u0000${call.principal.type}:${call.principal.id}\u0000${JSON.stringify(
      call.entities[0],
    )}\u0000${JSON.stringify(call.context)}`;
    let response = this.memo.get(memoKey);
    if (!response) {
      const answer = cedar.statefulIsAuthorized({
        principal: call.principal,
        action: call.action,
        resource: call.resource,
        context: call.context,
        preparsedPolicySetId: set.id,
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
    if (response.decision === "allow") return { decision: "allow", reasons: [] };
    const reasonOf = (binding: CompiledBinding, ruleId: string): DecisionReason => ({
      policyId: binding.policyId,
      version: binding.version,
      ruleId,
      bindingId: binding.id,
      mode: binding.mode,
    });
    const forbids = response.diagnostics.reason.flatMap((id) => {
      const origin = set.origin.get(id);
      return origin ? [reasonOf(origin.binding, origin.ruleId)] : [];
    });
    if (forbids.length > 0) return { decision: "deny", reasons: forbids };
    // No permit applied: name the permits that cover the action (the rules to widen), or the bindings.
    const permits = [...set.origin.values()].filter(
      (o) =>
        o.effect === "permit" &&
        o.binding.rules.some((r) => r.id === o.ruleId && (r.actions === null || r.actions.includes(call.action.id))),
    );
    if (permits.length > 0) return { decision: "deny", reasons: permits.map((o) => reasonOf(o.binding, o.ruleId)) };
    return { decision: "deny", reasons: bindings.map((b) => reasonOf(b, "default-deny")) };
  }

  private prepare(bindings: CompiledBinding[]): PreparedSet {
    const id = bindings
      .map((b) => `${b.id}@${b.version}:${b.mode}`)
      .sort()
      .join(",");
    const existing = this.prepared.get(id);
    if (existing) return existing;
    const origin: PreparedSet["origin"] = new Map();
    const statements: Record<string, string> = {};
    let needsEntities = false;
    for (const binding of bindings) {
      for (const rule of binding.rules) {
        const key = `${binding.id}/${rule.id}`;
        origin.set(key, { binding, ruleId: rule.id, effect: rule.effect });
        statements[key] = rule.text;
        if (ENTITY_USE.test(rule.text)) needsEntities = true;
      }
    }
    const parsed = cedar.preparsePolicySet(id, { staticPolicies: statements });
    if (parsed.type === "failure") throw new Error(`stored policy set did not parse: ${parsed.errors[0]?.message}`);
    const set = { id, origin, needsEntities };
    this.prepared.set(id, set);
    return set;
  }
}
