import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { activatedOn, addMember, json } from "./fixtures/harness.ts";

const ORGS = 12;

/**
 * An admin inviting while an owner demotes or removes them: an invitation grants no more than its
 * sender can still grant, so the change revokes the sender's pending invitations above their new
 * role. One sent at the same moment must not escape that (the admin could come back as an admin
 * through an address of their own). Only Postgres runs the two at once (PGlite has one connection).
 */
describe.each(await databaseTargets())("inviting while losing the role to invite ($name)", (target) => {
  const suite = activatedOn(target);

  async function race(kind: string, change: (orgId: string, adminId: string) => Promise<Response>) {
    const orgs = await Promise.all(
      Array.from({ length: ORGS }, async (_, n) => {
        const res = await suite.h.call("POST", "/v1/orgs", { as: suite.h.owner, body: { name: `${kind} ${n}` } });
        const orgId = (await json<{ id: string }>(res)).id;
        return { orgId, admin: await addMember(suite.h, suite.h.owner, orgId, `${kind}-${n}@x.test`, "admin") };
      }),
    );
    return Promise.all(
      orgs.map(async ({ orgId, admin }) => {
        const [invited, changed] = await Promise.all([
          suite.h.call("POST", `/v1/orgs/${orgId}/invitations`, {
            as: admin,
            body: { email: `${kind}-${orgId}@elsewhere.test`, role: "admin" },
          }),
          change(orgId, admin.id),
        ]);
        const pending = await suite.h.service.context.db
          .selectFrom("invitations")
          .select("id")
          .where("org_id", "=", orgId)
          .where("invited_by", "=", admin.id)
          .where("status", "=", "pending")
          .execute();
        return { orgId, statuses: [invited.status, changed.status], pending };
      }),
    );
  }

  it.skipIf(!target.available)(`leaves no admin invitation of a demoted admin${target.reason}`, async () => {
    const results = await race("demoted", (orgId, adminId) =>
      suite.h.call("PATCH", `/v1/orgs/${orgId}/members/${adminId}`, { as: suite.h.owner, body: { role: "member" } }),
    );
    for (const { orgId, statuses, pending } of results) {
      expect([
        [201, 200],
        [403, 200],
      ]).toContainEqual(statuses);
      expect(pending, orgId).toEqual([]);
    }
  });

  it.skipIf(!target.available)(`leaves no invitation of a removed admin${target.reason}`, async () => {
    const results = await race("removed", (orgId, adminId) =>
      suite.h.call("DELETE", `/v1/orgs/${orgId}/members/${adminId}`, { as: suite.h.owner }),
    );
    for (const { orgId, statuses, pending } of results) {
      expect([
        [201, 204],
        [404, 204],
      ]).toContainEqual(statuses);
      expect(pending, orgId).toEqual([]);
    }
  });
});
