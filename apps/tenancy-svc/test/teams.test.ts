import { type AuthorizeResponse, internalAuthorizeRoute } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

describe("teams (PGlite)", () => {
  let database: Database;
  let h: Awaited<ReturnType<typeof startActivated>>;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    h = await startActivated(database);
  });
  afterAll(async () => {
    await stopTenancies();
    await database.close();
  });

  async function decide(principal: object, permission: string, projectId: string): Promise<AuthorizeResponse> {
    return json<AuthorizeResponse>(
      await h.internal("POST", internalAuthorizeRoute.path, { principal, permission, projectId }),
    );
  }

  it("creates, lists, updates and deletes teams", async () => {
    const created = await h.call("POST", `/v1/orgs/${h.orgId}/teams`, {
      as: h.owner,
      body: { name: "platform", description: "runs the platform" },
    });
    expect(created.status).toBe(201);
    const team = await json<{ id: string }>(created);
    const list = await json<{ items: { id: string }[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/teams`, { as: h.owner }),
    );
    expect(list.items.map((t) => t.id)).toContain(team.id);
    const updated = await h.call("PATCH", `/v1/teams/${team.id}`, { as: h.owner, body: { name: "infra" } });
    expect(await json(updated)).toMatchObject({ name: "infra", description: "runs the platform" });
    expect((await h.call("POST", `/v1/orgs/${h.orgId}/teams`, { as: h.owner, body: {} })).status).toBe(400);
    expect((await h.call("DELETE", `/v1/teams/${team.id}`, { as: h.owner })).status).toBe(204);
    expect((await h.call("GET", `/v1/teams/${team.id}`, { as: h.owner })).status).toBe(404);
  });

  it("grants project roles through teams; the highest grant wins and revoking takes it away", async () => {
    const erin = await addMember(h, h.owner, h.orgId, "erin@x.test", "member");
    const project = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "agents" } }),
    );
    // An org member sees every project as viewer.
    expect(await decide(erin, "sandboxes:write", project.id)).toMatchObject({
      decision: "forbidden",
      projectRole: "viewer",
    });

    const team = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/teams`, { as: h.owner, body: { name: "devs" } }),
    );
    const add = await h.call("PUT", `/v1/teams/${team.id}/members/${erin.id}`, { as: h.owner });
    expect(await json(add)).toEqual({ teamId: team.id, userId: erin.id });
    expect((await h.call("PUT", `/v1/teams/${team.id}/members/${erin.id}`, { as: h.owner })).status).toBe(200);
    const grant = await h.call("PUT", `/v1/teams/${team.id}/projects/${project.id}`, {
      as: h.owner,
      body: { role: "developer" },
    });
    expect(await json(grant)).toEqual({ teamId: team.id, projectId: project.id, role: "developer" });
    expect(await decide(erin, "sandboxes:write", project.id)).toMatchObject({
      decision: "allowed",
      projectRole: "developer",
    });
    expect(await decide(erin, "project:update", project.id)).toMatchObject({ decision: "forbidden" });
    // The answer names the user's teams (for resources restricted to teams, such as connector tools).
    expect((await decide(erin, "connections:read", project.id)).teamIds).toEqual([team.id]);

    const detail = await json(await h.call("GET", `/v1/teams/${team.id}`, { as: erin }));
    expect(detail).toMatchObject({
      members: [{ userId: erin.id }],
      projects: [{ projectId: project.id, role: "developer" }],
    });

    expect((await h.call("DELETE", `/v1/teams/${team.id}/projects/${project.id}`, { as: h.owner })).status).toBe(204);
    expect(await decide(erin, "sandboxes:write", project.id)).toMatchObject({ decision: "forbidden" });
    expect((await h.call("DELETE", `/v1/teams/${team.id}/projects/${project.id}`, { as: h.owner })).status).toBe(404);
    expect((await h.call("DELETE", `/v1/teams/${team.id}/members/${erin.id}`, { as: h.owner })).status).toBe(204);
    expect((await h.call("DELETE", `/v1/teams/${team.id}/members/${erin.id}`, { as: h.owner })).status).toBe(404);
  });

  it("only takes members and projects of the team's organization", async () => {
    const team = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/teams`, { as: h.owner, body: { name: "closed" } }),
    );
    const stranger = await h.oidcUser("stranger@y.test");
    expect((await h.call("PUT", `/v1/teams/${team.id}/members/${stranger.id}`, { as: h.owner })).status).toBe(404);
    const otherOrg = await json<{ id: string }>(
      await h.call("POST", "/v1/orgs", { as: stranger, body: { name: "Y" } }),
    );
    const foreign = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${otherOrg.id}/projects`, { as: stranger, body: { name: "y" } }),
    );
    const res = await h.call("PUT", `/v1/teams/${team.id}/projects/${foreign.id}`, {
      as: h.owner,
      body: { role: "admin" },
    });
    expect(res.status).toBe(404);
    const badRole = await h.call("PUT", `/v1/teams/${team.id}/projects/${foreign.id}`, {
      as: h.owner,
      body: { role: "root" },
    });
    expect(badRole.status).toBe(400);
  });
});
