import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { activatedOn, json } from "./fixtures/harness.ts";

const ORGS = 12;

/**
 * Two invitations to one address sent at the same moment: an address holds one pending
 * invitation per organization, so one of the two is a 409 naming the other, never two pending
 * invitations that both must be revoked. Only Postgres runs the two at once (PGlite has one
 * connection).
 */
describe.each(await databaseTargets())("inviting one address twice at once ($name)", (target) => {
  const suite = activatedOn(target);

  it.skipIf(!target.available)(`leaves one pending invitation per address${target.reason}`, async () => {
    const orgIds = await Promise.all(
      Array.from({ length: ORGS }, async (_, n) => {
        const res = await suite.h.call("POST", "/v1/orgs", { as: suite.h.owner, body: { name: `twice ${n}` } });
        return (await json<{ id: string }>(res)).id;
      }),
    );
    const results = await Promise.all(
      orgIds.map(async (orgId) => {
        const send = (email: string) =>
          suite.h.call("POST", `/v1/orgs/${orgId}/invitations`, { as: suite.h.owner, body: { email, role: "member" } });
        // The same address, once as typed and once in other case.
        const answers = await Promise.all([send(`twice-${orgId}@x.test`), send(`TWICE-${orgId}@X.test`)]);
        const pending = await suite.h.service.context.db
          .selectFrom("invitations")
          .select("id")
          .where("org_id", "=", orgId)
          .where("status", "=", "pending")
          .execute();
        return { orgId, statuses: answers.map((a) => a.status).sort(), pending };
      }),
    );
    for (const { orgId, statuses, pending } of results) {
      expect(statuses, orgId).toEqual([201, 409]);
      expect(pending, orgId).toHaveLength(1);
    }
  });
});
