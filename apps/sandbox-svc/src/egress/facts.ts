import type { EgressRefusalRequest, Principal, SandboxEgressFacts } from "@agentplane/contracts";
import type { Caller } from "@agentplane/service-kit";
import { recordStandaloneSandboxEvent, type SandboxDeps } from "../services/context.ts";

/** A refusal to record: what `sandbox.egress_denied` says of it (the repeats on a window's summary). */
export type EgressRefusal = EgressRefusalRequest;

/**
 * What deciding egress reads and writes besides governance: a sandbox's organization, project and
 * labels, and the record of a refused connection. sandbox-svc answers both from its own schema
 * (`localEgressFacts`); the egress deployable, which holds no database, asks sandbox-svc
 * (`remote-facts.ts`, decision 0065).
 */
export interface EgressFacts {
  /** Undefined when no such sandbox (or one outside any organization) exists. */
  sandbox(sandboxId: string): Promise<SandboxEgressFacts | undefined>;
  /** Records the refusal; false when its sandbox is unknown. */
  recordRefusal(refusal: EgressRefusal): Promise<boolean>;
}

/** The sandbox itself as the principal of its egress decisions and of their audit records. */
export function sandboxPrincipal(sandboxId: string, projectId: string, orgId: string): Principal {
  return { type: "sandbox", id: sandboxId, sandboxId, projectId, orgId };
}

/** A sandbox's egress facts from sandbox-svc's own schema. */
export async function readEgressFacts(
  deps: Pick<SandboxDeps, "db">,
  sandboxId: string,
): Promise<SandboxEgressFacts | undefined> {
  const row = await deps.db
    .selectFrom("sandboxes")
    .select(["id", "org_id", "project_id", "labels"])
    .where("id", "=", sandboxId)
    .executeTakeFirst();
  if (!row?.org_id) return undefined;
  return { id: row.id, orgId: row.org_id, projectId: row.project_id, labels: row.labels ?? {} };
}

/**
 * Records a refused connection as `sandbox.egress_denied` through the service's outbox, by the
 * sandbox itself, in its organization and project as sandbox-svc knows them (never as the caller
 * says). False when the sandbox is unknown.
 */
export async function recordEgressRefusalEvent(deps: SandboxDeps, refusal: EgressRefusal): Promise<boolean> {
  const sandbox = await readEgressFacts(deps, refusal.sandboxId);
  if (!sandbox) return false;
  const principal = sandboxPrincipal(sandbox.id, sandbox.projectId, sandbox.orgId);
  const caller: Caller = { principal, orgId: sandbox.orgId };
  const { host, port, ruleId, reasons, policies, reason, repeats, windowSeconds } = refusal;
  await recordStandaloneSandboxEvent(deps, caller, {
    action: "sandbox.egress_denied",
    projectId: sandbox.projectId,
    orgId: sandbox.orgId,
    targetType: "sandbox",
    targetId: sandbox.id,
    outcome: "denied",
    details: {
      host,
      port,
      ruleId,
      reasons,
      policies,
      ...(ruleId || reason === undefined ? {} : { reason }),
      ...(repeats !== undefined ? { repeats, windowSeconds } : {}),
    },
  });
  return true;
}

/** sandbox-svc's own proxy: its schema and its outbox. */
export function localEgressFacts(deps: SandboxDeps): EgressFacts {
  return {
    sandbox: (sandboxId) => readEgressFacts(deps, sandboxId),
    recordRefusal: (refusal) => recordEgressRefusalEvent(deps, refusal),
  };
}
