import type { DriftReport, SandboxSummary } from "@agentplane/contracts";
import type { Caller } from "@agentplane/service-kit";
import { type Kysely, sql } from "kysely";
import { partial, statementsFor } from "../cedar/analysis.ts";
import { cedarContext } from "../cedar/request.ts";
import type { GovernanceContext } from "../context.ts";
import { jsonb } from "../db/json.ts";
import type { GovernanceDb } from "../db/schema.ts";
import { type CompiledBinding, coversAction, loadOrgState } from "../engine/org-state.ts";
import { bindingsReachingSandbox, sandboxEntities } from "./effective-policy.ts";
import { querySandboxes } from "./sandboxes.ts";

type Entry = DriftReport["items"][number];
const entryKey = (e: Entry) => [e.reason, e.bindingId, e.target.id, e.ruleId ?? "", e.action ?? ""].join("|");

/** Would the current enforced bindings admit this request about an existing sandbox, whoever asked? */
function wouldDeny(
  bindings: CompiledBinding[],
  sandbox: SandboxSummary,
  action: string,
  context: Record<string, unknown>,
): { binding: CompiledBinding; ruleId: string } | undefined {
  const statements = statementsFor(
    bindings.filter((b) => b.mode === "enforce"),
    action,
  );
  if (statements.length === 0) return undefined;
  const { resource, entities } = sandboxEntities(sandbox);
  const answer = partial(statements, { action, resource, entities, context: cedarContext(action, context) });
  if (answer.decision !== "deny") return undefined;
  const forbid = statements.find((s) => s.effect === "forbid" && answer.satisfied.has(s.key));
  if (forbid) return { binding: forbid.binding, ruleId: forbid.ruleId };
  const permit = statements.find((s) => s.effect === "permit");
  return { binding: (permit ?? statements[0]!).binding, ruleId: permit?.ruleId ?? "default-deny" };
}

/**
 * Gatekeeper-style audit of one organization: sandboxes the current bindings would not admit
 * (image, resources, ports at creation; each public port), running sandboxes whose egress proxy
 * last decided under an older policy version, and bindings pinned to a version older than their
 * policy's latest. `since` carries over from the previous report for the same finding.
 */
export async function computeDrift(ctx: GovernanceContext, orgId: string): Promise<DriftReport> {
  const now = new Date().toISOString();
  const previous = await ctx.db
    .selectFrom("drift_reports")
    .select("report")
    .where("org_id", "=", orgId)
    .executeTakeFirst();
  const since = new Map(
    ((previous?.report as DriftReport | undefined)?.items ?? []).map((e) => [entryKey(e), e.since]),
  );
  const state = await loadOrgState(ctx.db, orgId);
  const items: Entry[] = [];
  let pinnedBindings = 0;
  for (const b of state.bindings) {
    if (!b.pinned || b.version >= b.latestVersion) continue;
    pinnedBindings++;
    items.push({
      reason: "pinned-version",
      bindingId: b.id,
      policyId: b.policyId,
      version: b.version,
      latestVersion: b.latestVersion,
      target: b.projectId
        ? { kind: "project", id: b.projectId, projectId: b.projectId }
        : { kind: "organization", id: orgId },
      since: now,
    });
  }
  const resources = new Set<string>();
  const sandboxes = ctx.sandboxes && state.bindings.length > 0 ? await querySandboxes(ctx, { orgId }) : [];
  for (const sandbox of sandboxes) {
    const reaching = bindingsReachingSandbox(state, sandbox);
    if (reaching.length === 0) continue;
    const checks: [string, Record<string, unknown>][] = [
      ["sandbox:create", { image: sandbox.image, ports: sandbox.ports }],
    ];
    for (const p of sandbox.ports) {
      if (p.visibility === "public") checks.push(["sandbox:expose-port", { port: p.port, visibility: "public" }]);
    }
    for (const [action, context] of checks) {
      const denied = wouldDeny(reaching, sandbox, action, context);
      if (!denied) continue;
      resources.add(sandbox.id);
      items.push({
        reason: "resource",
        bindingId: denied.binding.id,
        policyId: denied.binding.policyId,
        version: denied.binding.version,
        target: { kind: "sandbox", id: sandbox.id, projectId: sandbox.projectId },
        ruleId: denied.ruleId,
        action,
        since: now,
      });
    }
  }
  // Running sandboxes whose egress proxy last decided under an older version than is in force now.
  const held = sandboxes.length > 0 ? await ctx.egressVersions.ofOrg(orgId) : new Map();
  const staleProxies = new Set<string>();
  for (const sandbox of sandboxes) {
    const record = held.get(sandbox.id);
    if (!record || sandbox.status !== "running") continue;
    for (const binding of bindingsReachingSandbox(state, sandbox)) {
      if (!coversAction(binding, "sandbox:egress")) continue;
      const version = record.policies.find((p: { bindingId: string }) => p.bindingId === binding.id)?.version;
      if (version === undefined || version >= binding.version) continue;
      staleProxies.add(sandbox.id);
      resources.add(sandbox.id);
      items.push({
        reason: "egress-version",
        bindingId: binding.id,
        policyId: binding.policyId,
        version,
        latestVersion: binding.version,
        target: { kind: "sandbox", id: sandbox.id, projectId: sandbox.projectId },
        action: "sandbox:egress",
        since: record.decidedAt,
      });
    }
  }
  if (ctx.sandboxes && state.bindings.length > 0) {
    await ctx.egressVersions
      .prune(orgId, new Set(sandboxes.map((s) => s.id)))
      .catch((err) => ctx.logger.warn({ err: (err as Error).message, orgId }, "egress versions not pruned"));
  }
  for (const item of items) item.since = since.get(entryKey(item)) ?? item.since;
  const report: DriftReport = {
    auditedAt: now,
    totals: {
      entries: items.length,
      resources: resources.size,
      pinnedBindings,
      egressProxies: staleProxies.size,
    },
    items,
  };
  await ctx.db
    .insertInto("drift_reports")
    .values({ org_id: orgId, audited_at: now, report: jsonb(report) })
    .onConflict((oc) => oc.column("org_id").doUpdateSet({ audited_at: now, report: jsonb(report) }))
    .execute();
  return report;
}

export async function getDrift(
  ctx: GovernanceContext,
  caller: Caller,
  { refresh }: { refresh: boolean },
): Promise<DriftReport> {
  const { orgId } = caller;
  if (!refresh) {
    const stored = await ctx.db
      .selectFrom("drift_reports")
      .select("report")
      .where("org_id", "=", orgId)
      .executeTakeFirst();
    if (stored) return stored.report as DriftReport;
  }
  return computeDrift(ctx, orgId);
}

/** Takes (or keeps) a named lease for `ms`; true when this holder has it. */
export async function acquireLease(
  db: Kysely<GovernanceDb>,
  name: string,
  holder: string,
  ms: number,
): Promise<boolean> {
  const row = await db
    .insertInto("leases")
    .values({ name, holder, expires_at: sql<Date>`now() + ${`${ms} milliseconds`}::interval` })
    .onConflict((oc) =>
      oc
        .column("name")
        .doUpdateSet({ holder, expires_at: sql<Date>`now() + ${`${ms} milliseconds`}::interval` })
        .where((eb) => eb.or([eb("leases.expires_at", "<", sql<Date>`now()`), eb("leases.holder", "=", holder)])),
    )
    .returning("holder")
    .executeTakeFirst();
  return row?.holder === holder;
}

/** The background audit: every `intervalMs`, on the one replica holding the lease, each organization with bindings. */
export function startDriftAudit(
  ctx: GovernanceContext,
  intervalMs: number,
): { stop(): void; runOnce(): Promise<number> } {
  let running: Promise<number> | undefined;
  const runOnce = async (): Promise<number> => {
    if (!(await acquireLease(ctx.db, "drift-audit", ctx.fanout.replicaId, intervalMs * 2))) return -1;
    const orgs = await ctx.db
      .selectFrom("bindings")
      .select("org_id")
      .distinct()
      .union(ctx.db.selectFrom("drift_reports").select("org_id"))
      .execute();
    for (const { org_id } of orgs) {
      await computeDrift(ctx, org_id).catch((err) =>
        ctx.logger.warn({ err: (err as Error).message, orgId: org_id }, "drift audit failed for an organization"),
      );
    }
    return orgs.length;
  };
  const timer = setInterval(() => {
    if (running) return;
    running = runOnce()
      .catch((err) => {
        ctx.logger.warn({ err: (err as Error).message }, "drift audit round failed");
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    runOnce,
  };
}
