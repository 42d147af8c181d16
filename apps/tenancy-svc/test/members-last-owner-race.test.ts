import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { activatedOn, addMember, json } from "./fixtures/harness.ts";

const ORGS = 8;

/**
 * Two owners stepping down at the same moment: each alone would leave one owner, both together
 * none. The owner rows are locked before they are counted, so the second waits for the first and
 * then sees one owner left. Only Postgres runs the two transactions at once (PGlite has one
 * connection), so only there would a count without the lock let both through.
 */
describe.each(await databaseTargets())("the last owner under concurrent changes ($name)", (target) => {
  const suite = activatedOn(target);

  async function orgWithTwoOwners(n: number, kind: string) {
    const res = await suite.h.call("POST", "/v1/orgs", { as: suite.h.owner, body: { name: `${kind} ${n}` } });
    expect(res.status).toBe(201);
    const orgId = (await json<{ id: string }>(res)).id;
    const other = await addMember(suite.h, suite.h.owner, orgId, `${kind}-${n}@x.test`, "owner");
    return { orgId, other };
  }

  it.skipIf(!target.available)(`lets only one of two owners leave at once${target.reason}`, async () => {
    const orgs = await Promise.all(Array.from({ length: ORGS }, (_, n) => orgWithTwoOwners(n, "leave")));
    const results = await Promise.all(
      orgs.map(async ({ orgId, other }) => {
        const [first, second] = await Promise.all([
          suite.h.call("DELETE", `/v1/orgs/${orgId}/members/${suite.h.owner.userId}`, { as: suite.h.owner }),
          suite.h.call("DELETE", `/v1/orgs/${orgId}/members/${other.id}`, { as: other }),
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
          suite.h.call("PATCH", `/v1/orgs/${orgId}/members/${suite.h.owner.userId}`, {
            as: suite.h.owner,
            body: { role: "admin" },
          }),
          suite.h.call("DELETE", `/v1/orgs/${orgId}/members/${other.id}`, { as: other }),
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
    const rows = await suite.h.service.context.db
      .selectFrom("org_members")
      .select("user_id")
      .where("org_id", "=", orgId)
      .where("role", "=", "owner")
      .execute();
    return rows.length;
  }
});
