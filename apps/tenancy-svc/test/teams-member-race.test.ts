import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { activatedOn, addMember, json } from "./fixtures/harness.ts";

const ORGS = 12;

/**
 * A member removed while an admin adds them to a team: removal takes them out of every team of
 * the organization, so the team must not keep them (were they invited back, an old team's grants
 * would come back with them). Only Postgres runs the two at once (PGlite has one connection).
 */
describe.each(await databaseTargets())("adding to a team while it or its member goes ($name)", (target) => {
  const suite = activatedOn(target);

  async function orgWithTeamAndMember(n: number) {
    const res = await suite.h.call("POST", "/v1/orgs", { as: suite.h.owner, body: { name: `teams ${n}` } });
    const orgId = (await json<{ id: string }>(res)).id;
    const team = await suite.h.call("POST", `/v1/orgs/${orgId}/teams`, { as: suite.h.owner, body: { name: "t" } });
    const teamId = (await json<{ id: string }>(team)).id;
    const member = await addMember(suite.h, suite.h.owner, orgId, `leaver-${n}@x.test`, "member");
    return { orgId, teamId, member };
  }

  it.skipIf(!target.available)(`leaves no team membership of someone removed${target.reason}`, async () => {
    const orgs = await Promise.all(Array.from({ length: ORGS }, (_, n) => orgWithTeamAndMember(n)));
    const results = await Promise.all(
      orgs.map(async ({ orgId, teamId, member }) => {
        const [added, removed] = await Promise.all([
          suite.h.call("PUT", `/v1/teams/${teamId}/members/${member.id}`, { as: suite.h.owner }),
          suite.h.call("DELETE", `/v1/orgs/${orgId}/members/${member.id}`, { as: suite.h.owner }),
        ]);
        return { teamId, member, statuses: [added.status, removed.status] };
      }),
    );
    for (const { teamId, member, statuses } of results) {
      expect([
        [200, 204],
        [404, 204],
      ]).toContainEqual(statuses);
      const kept = await suite.h.service.context.db
        .selectFrom("team_members")
        .select("user_id")
        .where("team_id", "=", teamId)
        .where("user_id", "=", member.id)
        .execute();
      expect(kept, `${member.id} in ${teamId}`).toEqual([]);
    }
  });
  it.skipIf(!target.available)(`answers 404, not 500, when the team is deleted meanwhile${target.reason}`, async () => {
    const orgs = await Promise.all(Array.from({ length: ORGS }, (_, n) => orgWithTeamAndMember(ORGS + n)));
    const statuses = await Promise.all(
      orgs.map(async ({ teamId, member }) => {
        const [added, deleted] = await Promise.all([
          suite.h.call("PUT", `/v1/teams/${teamId}/members/${member.id}`, { as: suite.h.owner }),
          suite.h.call("DELETE", `/v1/teams/${teamId}`, { as: suite.h.owner }),
        ]);
        return [added.status, deleted.status];
      }),
    );
    for (const pair of statuses) {
      expect([
        [200, 204],
        [404, 204],
      ]).toContainEqual(pair);
    }
  });
});
