import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const ORGS = 12;

/**
 * Granting a team a project while the team or the project is deleted: the grant comes first (and
 * goes with what is deleted) or finds nothing to grant, a 404, never a failed insert's 500. Only
 * Postgres runs the two at once (PGlite has one connection).
 */
describe.each(await databaseTargets())("granting a project while the team or project goes ($name)", (target) => {
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

  async function race(kind: string, remove: (ids: { teamId: string; projectId: string }) => Promise<Response>) {
    const orgs = await Promise.all(
      Array.from({ length: ORGS }, async (_, n) => {
        const res = await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: `${kind} ${n}` } });
        const orgId = (await json<{ id: string }>(res)).id;
        const team = await h.call("POST", `/v1/orgs/${orgId}/teams`, { as: h.owner, body: { name: "t" } });
        const project = await h.call("POST", `/v1/orgs/${orgId}/projects`, { as: h.owner, body: { name: "p" } });
        return { teamId: (await json<{ id: string }>(team)).id, projectId: (await json<{ id: string }>(project)).id };
      }),
    );
    return Promise.all(
      orgs.map(async (ids) => {
        const [granted, removed] = await Promise.all([
          h.call("PUT", `/v1/teams/${ids.teamId}/projects/${ids.projectId}`, {
            as: h.owner,
            body: { role: "developer" },
          }),
          remove(ids),
        ]);
        return [granted.status, removed.status];
      }),
    );
  }

  it.skipIf(!target.available)(`answers 404, not 500, when the team is deleted meanwhile${target.reason}`, async () => {
    for (const pair of await race("team", ({ teamId }) => h.call("DELETE", `/v1/teams/${teamId}`, { as: h.owner }))) {
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
        h.call("DELETE", `/v1/projects/${projectId}`, { as: h.owner }),
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
