import { newId, type Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";
import { countingDatabase } from "./fixtures/query-counter.ts";

const targets = await databaseTargets();

describe.each(targets)("listing projects on $name", (target) => {
  describe.skipIf(!target.available)(`the caller's role on each listed project${target.reason}`, () => {
    let cleanup: () => Promise<void>;
    let counting: ReturnType<typeof countingDatabase>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      counting = countingDatabase(opened.database);
      h = await startActivated(counting.database);
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    async function newOrg(name: string): Promise<string> {
      const res = await h.call("POST", "/v1/orgs", { as: h.owner, body: { name } });
      expect(res.status).toBe(201);
      return (await json<{ id: string }>(res)).id;
    }

    async function createProject(orgId: string, as: Principal, name: string): Promise<string> {
      const res = await h.call("POST", `/v1/orgs/${orgId}/projects`, { as, body: { name } });
      expect(res.status).toBe(201);
      return (await json<{ id: string }>(res)).id;
    }

    async function token(orgId: string, as: Principal, role: string): Promise<Principal> {
      const res = await h.call("POST", `/v1/orgs/${orgId}/api-tokens`, { as, body: { name: `${role} token`, role } });
      expect(res.status).toBe(201);
      return h.principalOf((await json<{ token: string }>(res)).token);
    }

    /** Every page of the listing, with the role on each project, in the order listed. */
    async function listAll(orgId: string, as: Principal, limit: number) {
      const items: { id: string; role?: string }[] = [];
      let cursor: string | undefined;
      do {
        const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const res = await h.call("GET", `/v1/orgs/${orgId}/projects?${query}`, { as });
        expect(res.status).toBe(200);
        const page = await json<{ items: { id: string; role?: string }[]; nextCursor?: string }>(res);
        items.push(...page.items.map(({ id, role }) => ({ id, ...(role ? { role } : {}) })));
        cursor = page.nextCursor;
      } while (cursor);
      return items;
    }

    it("mixes the org role, team grants, direct grants and a token's lower role, page by page", async () => {
      const orgId = await newOrg("roles on a list");
      const member = await addMember(h, h.owner, orgId, "list-roles@example.test", "member");
      const plain = await createProject(orgId, h.owner, "plain");
      const teamed = await createProject(orgId, h.owner, "teamed");
      // A member who creates a project holds a direct admin grant on it.
      const own = await createProject(orgId, member, "own");
      const team = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${orgId}/teams`, { as: h.owner, body: { name: "list roles" } }),
      );
      expect((await h.call("PUT", `/v1/teams/${team.id}/members/${member.id}`, { as: h.owner })).status).toBe(200);
      const granted = await h.call("PUT", `/v1/teams/${team.id}/projects/${teamed}`, {
        as: h.owner,
        body: { role: "developer" },
      });
      expect(granted.status).toBe(200);
      const ids = [plain, teamed, own].sort();
      const rolesOf = (items: { id: string; role?: string }[]) => Object.fromEntries(items.map((p) => [p.id, p.role]));

      // Ordered by id, the same whatever the page size (the cursor continues where a page ended).
      for (const limit of [1, 2, 50]) {
        expect((await listAll(orgId, h.owner, limit)).map((p) => p.id)).toEqual(ids);
      }
      // The owner: admin everywhere through the org role.
      expect(rolesOf(await listAll(orgId, h.owner, 2))).toEqual({
        [plain]: "admin",
        [teamed]: "admin",
        [own]: "admin",
      });
      // The member: viewer through the org role, developer through the team, admin through the direct grant.
      const memberRoles = { [plain]: "viewer", [teamed]: "developer", [own]: "admin" };
      expect(rolesOf(await listAll(orgId, member, 1))).toEqual(memberRoles);
      expect(rolesOf(await listAll(orgId, member, 50))).toEqual(memberRoles);
      // Each as getProject answers it.
      for (const id of ids) {
        const one = await json<{ role?: string }>(await h.call("GET", `/v1/projects/${id}`, { as: member }));
        expect(one.role).toBe(memberRoles[id]);
      }
      // The member's member-role token keeps developer access at most; a viewer-role token views.
      const memberToken = await token(orgId, member, "member");
      expect(rolesOf(await listAll(orgId, memberToken, 2))).toEqual({
        [plain]: "viewer",
        [teamed]: "developer",
        [own]: "developer",
      });
      const viewerToken = await token(orgId, member, "viewer");
      expect(rolesOf(await listAll(orgId, viewerToken, 50))).toEqual({
        [plain]: "viewer",
        [teamed]: "viewer",
        [own]: "viewer",
      });
      // The owner's member-role token: the org role is capped too.
      const ownerMemberToken = await token(orgId, h.owner, "member");
      expect(rolesOf(await listAll(orgId, ownerMemberToken, 50))).toEqual({
        [plain]: "developer",
        [teamed]: "developer",
        [own]: "developer",
      });
    });

    it("lists a page in a number of statements that does not grow with the number of projects", async () => {
      const orgId = await newOrg("many projects");
      const member = await addMember(h, h.owner, orgId, "list-count@example.test", "member");
      const team = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${orgId}/teams`, { as: h.owner, body: { name: "count" } }),
      );
      expect((await h.call("PUT", `/v1/teams/${team.id}/members/${member.id}`, { as: h.owner })).status).toBe(200);
      const first = await createProject(orgId, h.owner, "first");
      const grant = (projectId: string) =>
        h.call("PUT", `/v1/teams/${team.id}/projects/${projectId}`, { as: h.owner, body: { role: "developer" } });
      expect((await grant(first)).status).toBe(200);

      const statementsToList = async (as: Principal) => {
        const { result, statements } = await counting.count(() => listAll(orgId, as, 200));
        return { listed: result.length, statements };
      };
      const fewOwner = await statementsToList(h.owner);
      const fewMember = await statementsToList(member);
      expect(fewOwner.listed).toBe(1);

      // Many more projects (rows written directly: listing reads nothing else of them), the
      // member granted through the team on some.
      const more = Array.from({ length: 60 }, (_, i) => ({
        id: newId("project"),
        org_id: orgId,
        name: `bulk ${i}`,
        updated_at: new Date(),
      }));
      await h.service.context.db.insertInto("projects").values(more).execute();
      for (const p of more.slice(0, 5)) expect((await grant(p.id)).status).toBe(200);

      const manyOwner = await statementsToList(h.owner);
      const manyMember = await statementsToList(member);
      expect(manyOwner.listed).toBe(61);
      expect(manyMember.listed).toBe(61);
      expect(manyOwner.statements).toBe(fewOwner.statements);
      expect(manyMember.statements).toBe(fewMember.statements);
      // The caller's org role, the page, and the roles on the page.
      expect(manyMember.statements).toBeLessThanOrEqual(3);
    });
  });
});
