import { matchesSelector, parseSelector, type SelectorRequirement } from "@agentplane/contracts";
import type { Kysely } from "kysely";
import { bindingsInForce } from "../db/bindings-in-force.ts";
import type { BindingTargetJson, GovernanceDb, StoredRule } from "../db/schema.ts";
import { projectLabelsOf } from "../services/project-labels.ts";

/** A binding as decisions use it: the policy version it resolves to, compiled. */
export interface CompiledBinding {
  id: string;
  scope: "org" | "project";
  projectId: string | undefined;
  policyId: string;
  policyName: string;
  /** The version in force: the pinned one, or the policy's latest. */
  version: number;
  latestVersion: number;
  pinned: boolean;
  mode: "enforce" | "dryrun";
  target: BindingTargetJson;
  selector: SelectorRequirement[];
  /** An org binding's project label selector, parsed (empty: no narrowing by project labels). */
  projectSelector: SelectorRequirement[];
  rules: StoredRule[];
}

export interface OrgState {
  orgId: string;
  bindings: CompiledBinding[];
  loadedAt: number;
  /** Labels of the organization's projects, loaded when an org binding selects projects by label. */
  projectLabels: Map<string, Record<string, string>>;
  /** Whether any binding selects by label (otherwise labels do not change which bindings reach). */
  selectsLabels: boolean;
  /** What decisions looked up in this state, by kind of request (the engine's cache; dies with the state). */
  lookups: Map<string, unknown>;
}

/** What a binding is matched against: where the resource lives, its kind and labels. */
export interface ResourceRef {
  projectId?: string | undefined;
  kind?: string | undefined;
  labels?: Record<string, string> | undefined;
}

/** Reads every binding of an organization with the policy version it resolves to. */
export async function loadOrgState(db: Kysely<GovernanceDb>, orgId: string): Promise<OrgState> {
  const rows = await bindingsInForce(db)
    .select([
      "b.id",
      "b.project_id",
      "b.policy_id",
      "b.version as pinned_version",
      "b.mode",
      "b.target",
      "p.name as policy_name",
      "p.latest_version",
      "v.version",
      "v.rules",
    ])
    .where("b.org_id", "=", orgId)
    .orderBy("b.id")
    .execute();
  const bindings = rows.map((row): CompiledBinding => {
    const target = row.target as unknown as BindingTargetJson;
    return {
      id: row.id,
      scope: row.project_id ? "project" : "org",
      projectId: row.project_id ?? undefined,
      policyId: row.policy_id,
      policyName: row.policy_name,
      version: row.version,
      latestVersion: row.latest_version,
      pinned: row.pinned_version !== null,
      mode: row.mode,
      target,
      selector: target.selector ? parseSelector(target.selector) : [],
      projectSelector: target.projectSelector ? parseSelector(target.projectSelector) : [],
      rules: row.rules as unknown as StoredRule[],
    };
  });
  const selectsProjects = bindings.some((b) => b.projectSelector.length > 0);
  return {
    orgId,
    loadedAt: Date.now(),
    bindings,
    projectLabels: selectsProjects ? await projectLabelsOf(db, orgId) : new Map(),
    selectsLabels: bindings.some((b) => b.selector.length > 0),
    lookups: new Map(),
  };
}

/**
 * Whether a binding reaches a resource: its project (or the org's projects narrowed by id or by
 * their labels, `projectLabels` being the organization's), kind and labels.
 */
export function bindingReaches(
  binding: CompiledBinding,
  resource: ResourceRef,
  projectLabels?: Map<string, Record<string, string>>,
): boolean {
  if (binding.scope === "project" && binding.projectId !== resource.projectId) return false;
  const { projectIds, kind } = binding.target;
  if (projectIds && (!resource.projectId || !projectIds.includes(resource.projectId))) return false;
  if (binding.projectSelector.length > 0) {
    const labels = resource.projectId ? projectLabels?.get(resource.projectId) : undefined;
    if (!matchesSelector(binding.projectSelector, labels ?? {})) return false;
  }
  if (kind && kind !== resource.kind) return false;
  if (binding.selector.length > 0 && !matchesSelector(binding.selector, resource.labels ?? {})) return false;
  return true;
}

export function coversAction(binding: CompiledBinding, action: string): boolean {
  return binding.rules.some((rule) => rule.actions === null || rule.actions.includes(action));
}
