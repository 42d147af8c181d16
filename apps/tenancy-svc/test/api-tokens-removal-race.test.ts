import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { activatedOn, addMember, json } from "./fixtures/harness.ts";

const ORGS = 12;

/**
 * A member minting a token while an owner removes them: removal revokes the member's tokens in the
 * organization, so none may stay live (were they invited back, it would act for them again).
 * Only Postgres runs the two at once (PGlite has one connection).
 */
describe.each(await databaseTargets())("minting a token while being removed ($name)", (target) => {
  const suite = activatedOn(target);

  it.skipIf(!target.available)(`leaves no live token of someone removed${target.reason}`, async () => {
    const orgs = await Promise.all(
      Array.from({ length: ORGS }, async (_, n) => {
        const res = await suite.h.call("POST", "/v1/orgs", { as: suite.h.owner, body: { name: `tokens ${n}` } });
        const orgId = (await json<{ id: string }>(res)).id;
        return { orgId, member: await addMember(suite.h, suite.h.owner, orgId, `minter-${n}@x.test`, "admin") };
      }),
    );
    const results = await Promise.all(
      orgs.map(async ({ orgId, member }) => {
        const [minted, removed] = await Promise.all([
          suite.h.call("POST", `/v1/orgs/${orgId}/api-tokens`, { as: member, body: { name: "late" } }),
          suite.h.call("DELETE", `/v1/orgs/${orgId}/members/${member.id}`, { as: suite.h.owner }),
        ]);
        return { orgId, member, statuses: [minted.status, removed.status] };
      }),
    );
    for (const { orgId, member, statuses } of results) {
      expect([
        [201, 204],
        [404, 204],
      ]).toContainEqual(statuses);
      const live = await suite.h.service.context.db
        .selectFrom("api_tokens")
        .select("id")
        .where("org_id", "=", orgId)
        .where("user_id", "=", member.id)
        .where("revoked_at", "is", null)
        .execute();
      expect(live, `${member.id} in ${orgId}`).toEqual([]);
    }
  });
});
