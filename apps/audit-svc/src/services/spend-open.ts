import type { SpendOpenRequest, SpendOpenResponse } from "@agentplane/contracts";
import type { Kysely } from "kysely";
import type { AuditDb } from "../db/schema.ts";

/**
 * Records calls a producer already forwarded without reserving (no limit applied to their scope
 * when it last asked): one multi-row insert of active reservations holding nothing, under the
 * producer's ids (a retried batch changes nothing). Their usage event settles them and counts
 * their cost toward whatever limits apply by then; a crash leaves them to expire at the estimate.
 * One more query says, per call, whether a limit applies to its scope now, so the producer stops
 * skipping the reservation there as soon as one was created.
 */
export async function openReservations(
  db: Kysely<AuditDb>,
  ttlMs: number,
  input: SpendOpenRequest,
): Promise<SpendOpenResponse> {
  const expiresAt = new Date(Date.now() + ttlMs);
  await db
    .insertInto("reservations")
    .values(
      input.reservations.map((r) => ({
        id: r.reservationId,
        org_id: r.orgId,
        project_id: r.projectId ?? null,
        amount_micro_usd: r.estimatedMicroUsd,
        state: "active" as const,
        settled_micro_usd: null,
        request_id: r.requestId ?? null,
        call: JSON.stringify(r.call),
        expires_at: expiresAt,
      })),
    )
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  const orgs = [...new Set(input.reservations.map((r) => r.orgId))];
  const limits = await db
    .selectFrom("spending_limits")
    .select(["org_id", "project_id"])
    .distinct()
    .where("org_id", "in", orgs)
    .execute();
  const orgWide = new Set(limits.filter((l) => l.project_id === null).map((l) => l.org_id));
  const projects = new Set(limits.map((l) => `${l.org_id}\u0000${l.project_id ?? ""}`));
  return {
    items: input.reservations.map((r) => ({
      reservationId: r.reservationId,
      limited: orgWide.has(r.orgId) || (r.projectId !== undefined && projects.has(`${r.orgId}\u0000${r.projectId}`)),
    })),
  };
}
