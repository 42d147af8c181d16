import type { SpendOpenRequest, SpendOpenResponse } from "@agentplane/contracts";
import { CompiledQuery, type Kysely } from "kysely";
import { AUDIT_SCHEMA, type AuditDb } from "../db/schema.ts";

/**
 * Records calls a producer already forwarded without reserving (no limit applied to their scope
 * when it last asked): one multi-row insert of active reservations holding nothing, under the
 * producer's ids (a retried batch changes nothing). Their usage event settles them and counts
 * their cost toward whatever limits apply by then; a crash leaves them to expire at the estimate.
 * The same statement says, per call, whether a limit applies to its scope now, so the producer
 * stops skipping the reservation there as soon as one was created.
 */
export async function openReservations(
  db: Kysely<AuditDb>,
  ttlMs: number,
  input: SpendOpenRequest,
): Promise<SpendOpenResponse> {
  const expiresAt = new Date(Date.now() + ttlMs).toISOString();
  const orgs = [...new Set(input.reservations.map((r) => r.orgId))];
  const limits = await db.executeQuery<{ org_id: string; project_id: string | null }>(
    CompiledQuery.raw(OPEN, [JSON.stringify(input.reservations), expiresAt, JSON.stringify(orgs)]),
  );
  const orgWide = new Set<string>();
  const projects = new Set<string>();
  for (const l of limits.rows) {
    if (l.project_id === null) orgWide.add(l.org_id);
    else projects.add(`${l.org_id}\u0000${l.project_id}`);
  }
  return {
    items: input.reservations.map((r) => ({
      reservationId: r.reservationId,
      limited: orgWide.has(r.orgId) || (r.projectId !== undefined && projects.has(`${r.orgId}\u0000${r.projectId}`)),
    })),
  };
}

// One fixed statement (prepared once per connection whatever the batch size): the insert runs as
// part of it, and its result is which scopes of the batch's organizations have a limit.
const OPEN = `with opened as (
    insert into ${AUDIT_SCHEMA}.reservations (id, org_id, project_id, amount_micro_usd, state, request_id, call, expires_at)
    select r."reservationId", r."orgId", r."projectId", r."estimatedMicroUsd", 'active', r."requestId", r.call,
      cast($2 as text)::timestamptz
    from jsonb_to_recordset(cast(cast($1 as text) as jsonb)) as r("reservationId" text, "orgId" text,
      "projectId" text, "estimatedMicroUsd" bigint, "requestId" text, call jsonb)
    on conflict (id) do nothing
  )
  select distinct org_id, project_id from ${AUDIT_SCHEMA}.spending_limits
  where org_id in (select jsonb_array_elements_text(cast(cast($3 as text) as jsonb)))`;
