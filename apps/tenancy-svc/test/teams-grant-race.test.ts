import { databaseTargets } from "@agentplane/db/testing";
import { describe, expect, it } from "vitest";
import { activatedOn, json } from "./fixtures/harness.ts";

const ORGS = 12;

/**
 * Granting a team a project while the team or the project is deleted: the grant comes first (and
 * goes with what is deleted) or finds nothing to grant, a 404, never a failed insert's 500. Only
 * Postgres runs the two at once (PGlite has one connection).
 */
describe.each(await databaseTargets())("granting a project while the team or project goes ($name)", (target) => {
  const suite = activatedOn(target);

  async function race(kind: string, remove: (ids: { teamId: string; projectId: string }) => Promise<Response>) {
    const orgs = await Promise.all(
      Array.from({ length: ORGS }, async (_, n) => {
        const res = await suite.h.call("POST", "/v1/orgs", { as: suite.h.owner, body: { name: `${kind} ${n}` } });
        const orgId = (await json<{ id: string }>(res)).id;
        const team = await suite.h.call("POST", `/v1/orgs/${orgId}/teams`, { as: suite.h.owner, body: { name: "t" } });
        const project = await suite.h.call("POST", `/v1/orgs/${orgId}/projects`, {
          as: suite.h.owner,
          body: { name: "p" },
        });
        return { teamId: (await json<{ id: string }>(team)).id, projectId: (await json<{ id: string }>(project)).id };
      }),
    );
    return Promise.all(
      orgs.map(async (ids) => {
        const [granted, removed] = await Promise.all([
          suite.h.call("PUT", `/v1/teams/${ids.teamId}/projects/${ids.projectId}`, {
            as: suite.h.owner,
            body: { role: "developer" },
          }),
          remove(ids),
        ]);
        return [granted.status, removed.status];
      }),
    );
  }

  it.skipIf(!target.available)(`answers 404, not 500, when the team is deleted meanwhile${target.reason}`, async () => {
    for (const pair of await race("team", ({ teamId }) =>
      suite.h.call("DELETE", `/v1/teams/${teamId}`, { as: suite.h.owner }),
    )) {
      expect([
        [200, 204],
        [404, 204],
      ]).toContainEqual(pair);
    }
  });

  it.skipIf(!target.available)(
    `answers 404, not 500, when the project is deleted meanwhile${target.reason}`,
    async () => {
      const results = await race("project", ({ projectId }) =>
        suite.h.call("DELETE", `/v1/projects/${projectId}`, { as: suite.h.owner }),
      );
      for (const pair of results) {
        expect([
          [200, 204],
          [404, 204],
        ]).toContainEqual(pair);
      }
    },
  );
});
