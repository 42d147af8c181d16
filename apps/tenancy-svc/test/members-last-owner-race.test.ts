import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const ORGS = 8;

/**
 * Two owners stepping down at the same moment: each alone would leave one owner, both together
 * none. The owner rows are locked before they are counted, so the second waits for the first and
 * then sees one owner left. Only Postgres runs the two transactions at once (PGlite has one
 * connection), so only there would a count without the lock let both through.
 */
describe.each(await databaseTargets())("the last owner under concurrent changes ($name)", (target) => {
  let cleanup: () => Promise<void>;
  let h: Awaited<ReturnType<typeof startActivated>>;
  beforeAll(async () => {
    if (!target.available) return;
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startActivated(opened.database);
  });
  afterAll(async () => {
    await stopTenancies();
    await cleanup?.();
  });

  async function orgWithTwoOwners(n: number, kind: string) {
    const res = await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: `${kind} ${n}` } });
    expect(res.status).toBe(201);
    const orgId = (await json<{ id: string }>(res)).id;
    const other = await addMember(h, h.owner, orgId, `${kind}-${n}@x.test`, "owner");
    return { orgId, other };
  }

  it.skipIf(!target.available)(`lets only one of two owners leave at once${target.reason}`, async () => {
    const orgs = await Promise.all(Array.from({ length: ORGS }, (_, n) => orgWithTwoOwners(n, "leave")));
    const results = await Promise.all(
      orgs.map(async ({ orgId, other }) => {
        const [first, second] = await Promise.all([
          h.call("DELETE", `/v1/orgs/${orgId}/members/${h.owner.userId}`, { as: h.owner }),
          h.call("DELETE", `/v1/orgs/${orgId}/members/${other.id}`, { as: other }),
        ]);
        return { orgId, statuses: [first.status, second.status].sort() };
      }),
    );
    for (const { orgId, statuses } of results) {
      expect(statuses).toEqual([204, 409]);
      expect(await ownersLeft(orgId)).toBe(1);
    }
  });

  it.skipIf(!target.available)(`lets only one of two owners step down at once${target.reason}`, async () => {
    const orgs = await Promise.all(Array.from({ length: ORGS }, (_, n) => orgWithTwoOwners(n, "demote")));
    const results = await Promise.all(
      orgs.map(async ({ orgId, other }) => {
        const [first, second] = await Promise.all([
          h.call("PATCH", `/v1/orgs/${orgId}/members/${h.owner.userId}`, { as: h.owner, body: { role: "admin" } }),
          h.call("DELETE", `/v1/orgs/${orgId}/members/${other.id}`, { as: other }),
        ]);
        return { orgId, statuses: [first.status, second.status].sort() };
      }),
    );
    for (const { orgId, statuses } of results) {
      expect([
        [200, 409],
        [204, 409],
      ]).toContainEqual(statuses);
      expect(await ownersLeft(orgId)).toBe(1);
    }
  });

  /** Owners of an org counted in the database, whoever of the two is still a member. */
  async function ownersLeft(orgId: string): Promise<number> {
    const rows = await h.service.context.db
      .selectFrom("org_members")
      .select("user_id")
      .where("org_id", "=", orgId)
      .where("role", "=", "owner")
      .execute();
    return rows.length;
  }
});
