import type { DecisionRequest, DecisionResponse } from "@agentplane/contracts";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { jsonb } from "../db/json.ts";
import type { GovernanceDb, HeldVersion } from "../db/schema.ts";

/**
 * What each sandbox's egress proxy holds. The proxy keeps no decision: it asks per destination,
 * and a connection it admitted stays open under the versions it was decided with. So the versions
 * of a sandbox's latest egress decision are what its proxy last enforced (and what its open
 * connections may have been admitted under); they are written when they change for the sandbox,
 * off the decision's path, and the drift audit compares them with the versions in force.
 */
export class EgressVersions {
  private readonly db: Kysely<GovernanceDb>;
  private readonly onError: (err: unknown) => void;
  /** The versions this replica last wrote per sandbox (a repeat writes nothing). */
  private readonly written = new LRUCache<string, string>({ max: 100_000 });

  constructor(db: Kysely<GovernanceDb>, onError: (err: unknown) => void) {
    this.db = db;
    this.onError = onError;
  }

  /** Notes an answered egress decision; returns the pending write, if any (tests await it). */
  note(request: DecisionRequest, response: DecisionResponse): Promise<void> | undefined {
    const sandboxId = request.principal.sandboxId;
    if (request.action !== "sandbox:egress" || !sandboxId) return undefined;
    const policies: HeldVersion[] = (response.policies ?? []).map((p) => ({
      bindingId: p.bindingId,
      policyId: p.policyId,
      version: p.version,
      mode: p.mode,
    }));
    const key = JSON.stringify(policies);
    if (this.written.get(sandboxId) === key) return undefined;
    this.written.set(sandboxId, key);
    const decidedAt = new Date(response.evaluatedAt);
    return this.db
      .insertInto("egress_versions")
      .values({
        sandbox_id: sandboxId,
        org_id: request.resource.orgId,
        project_id: request.resource.projectId ?? null,
        policies: jsonb(policies),
        decided_at: decidedAt,
      })
      .onConflict((oc) =>
        oc
          .column("sandbox_id")
          .doUpdateSet({ policies: jsonb(policies), decided_at: decidedAt })
          // Another replica may have written a later decision meanwhile.
          .where("egress_versions.decided_at", "<=", decidedAt),
      )
      .execute()
      .then(
        () => undefined,
        (err) => {
          this.written.delete(sandboxId);
          this.onError(err);
        },
      );
  }

  async ofOrg(orgId: string): Promise<Map<string, { policies: HeldVersion[]; decidedAt: string }>> {
    const rows = await this.db
      .selectFrom("egress_versions")
      .select(["sandbox_id", "policies", "decided_at"])
      .where("org_id", "=", orgId)
      .execute();
    return new Map(
      rows.map((r) => [
        r.sandbox_id,
        { policies: r.policies as unknown as HeldVersion[], decidedAt: new Date(r.decided_at).toISOString() },
      ]),
    );
  }

  /** Forgets the sandboxes of an organization that no longer exist. */
  async prune(orgId: string, existing: Set<string>): Promise<void> {
    const known = await this.db
      .selectFrom("egress_versions")
      .select("sandbox_id")
      .where("org_id", "=", orgId)
      .execute();
    const gone = known.map((r) => r.sandbox_id).filter((id) => !existing.has(id));
    if (gone.length === 0) return;
    await this.db.deleteFrom("egress_versions").where("sandbox_id", "in", gone).execute();
    for (const id of gone) this.written.delete(id);
  }
}
