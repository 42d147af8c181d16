import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

describe.each(targets)("organizations and identity on $name", (target) => {
  describe.skipIf(!target.available)(`organizations${target.reason}`, () => {
    let cleanup: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      h = await startActivated(opened.database);
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    it("creates, lists, gets, renames and deletes an organization", async () => {
      const user = await h.oidcUser("founder@x.test", "Founder");
      const res = await h.call("POST", "/v1/orgs", { as: user, body: { name: "  Acme  " } });
      expect(res.status).toBe(201);
      const org = await json<{ id: string }>(res);
      expect(org).toMatchObject({ name: "Acme", role: "owner" });
      const list = await json<{ items: { id: string; role: string }[] }>(await h.call("GET", "/v1/orgs", { as: user }));
      expect(list.items).toEqual([expect.objectContaining({ id: org.id, role: "owner" })]);
      expect((await h.call("GET", `/v1/orgs/${org.id}`, { as: user })).status).toBe(200);
      const renamed = await h.call("PATCH", `/v1/orgs/${org.id}`, { as: user, body: { name: "Acme Inc" } });
      expect(await json(renamed)).toMatchObject({ name: "Acme Inc" });
      // The other owner (of the Default org) does not see it.
      expect((await h.call("GET", `/v1/orgs/${org.id}`, { as: h.owner })).status).toBe(404);
      expect((await h.call("DELETE", `/v1/orgs/${org.id}`, { as: user })).status).toBe(204);
      expect((await h.call("GET", `/v1/orgs/${org.id}`, { as: user })).status).toBe(404);
    });

    it("pages through organizations", async () => {
      const user = await h.oidcUser("pager@x.test");
      for (const name of ["a", "b", "c"]) await h.call("POST", "/v1/orgs", { as: user, body: { name } });
      const first = await json<{ items: { name: string }[]; nextCursor: string }>(
        await h.call("GET", "/v1/orgs?limit=2", { as: user }),
      );
      expect(first.items.map((o) => o.name)).toEqual(["a", "b"]);
      const second = await json<{ items: { name: string }[]; nextCursor?: string }>(
        await h.call("GET", `/v1/orgs?limit=2&cursor=${first.nextCursor}`, { as: user }),
      );
      expect(second.items.map((o) => o.name)).toEqual(["c"]);
      expect(second.nextCursor).toBeUndefined();
      expect((await h.call("GET", "/v1/orgs?limit=0", { as: user })).status).toBe(400);
    });

    it("answers 400 problems for bad bodies", async () => {
      const unknown = await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "x", plan: "pro" } });
      expect(unknown.status).toBe(400);
      expect(await json(unknown)).toMatchObject({ errors: [{ pointer: "/body/plan", message: "Unknown field" }] });
      const empty = await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "   " } });
      expect(empty.status).toBe(400);
      // A right-to-left override would show "Acme\u202egnp.exe" as "Acmeexe.png" wherever it is listed.
      const disguised = await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "Acme\u202egnp.exe" } });
      expect(disguised.status).toBe(400);
      expect(await json(disguised)).toMatchObject({
        errors: [{ pointer: "/body/name", message: expect.stringContaining("bidirectional formatting") }],
      });
      const renamed = await h.call("PATCH", `/v1/orgs/${h.orgId}`, { as: h.owner, body: { name: "Acme\u0007" } });
      expect(renamed.status).toBe(400);
      const malformed = await h.call("POST", "/v1/orgs", { as: h.owner, body: "{nope" });
      expect(malformed.status).toBe(400);
      expect(malformed.headers.get("content-type")).toContain("application/problem+json");
      expect((await h.call("PATCH", `/v1/orgs/${h.orgId}`, { as: h.owner, body: { id: "org_x" } })).status).toBe(400);
    });

    it("keeps an org-bound token inside its org", async () => {
      const created = await json<{ token: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "bound" } }),
      );
      const bound = await h.principalOf(created.token);
      expect((await h.call("POST", "/v1/orgs", { as: bound, body: { name: "elsewhere" } })).status).toBe(403);
      const mine = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/orgs", { as: bound }));
      expect(mine.items.map((o) => o.id)).toEqual([h.orgId]);
      // The installation owner token is not bound: it can create and use a new org.
      const other = await json<{ id: string }>(
        await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "Two" } }),
      );
      expect((await h.call("POST", `/v1/orgs/${other.id}/projects`, { as: h.owner, body: { name: "p" } })).status).toBe(
        201,
      );
      expect((await h.call("GET", `/v1/orgs/${other.id}`, { as: bound })).status).toBe(404);
    });

    it("lists organizations to a scoped token only when its scopes name org:read", async () => {
      const scoped = async (scopes: string[]) =>
        h.principalOf(
          (
            await json<{ token: string }>(
              await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "s", scopes } }),
            )
          ).token,
        );
      const reader = await scoped(["org:read"]);
      const listed = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/orgs", { as: reader }));
      expect(listed.items.map((o) => o.id)).toEqual([h.orgId]);
      const res = await h.call("GET", "/v1/orgs", { as: await scoped(["llm:invoke"]) });
      expect(res.status).toBe(403);
      expect((await json<{ detail: string }>(res)).detail).toContain("org:read");
    });

    it("tells each identity type who it is", async () => {
      const user = await h.oidcUser("me@x.test", "Me Myself");
      const me = await json(await h.call("GET", "/v1/auth/me", { as: user }));
      expect(me).toMatchObject({
        type: "user",
        id: user.id,
        displayName: "Me Myself",
        email: "me@x.test",
        organizations: [],
      });
      const tokenMe = await json(await h.call("GET", "/v1/auth/me", { as: h.owner }));
      expect(tokenMe).toMatchObject({ type: "api_token", id: h.owner.id, userId: h.owner.userId });
      const project = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "c" } }),
      );
      const cluster = { type: "cluster" as const, id: "cl_1", projectId: project.id, orgId: h.orgId };
      expect(await json(await h.call("GET", "/v1/auth/me", { as: cluster }))).toMatchObject({
        type: "cluster",
        projectId: project.id,
        organizations: [{ id: h.orgId, role: "viewer" }],
      });
      const sandbox = { type: "sandbox" as const, id: "sbt_1", projectId: project.id, sandboxId: "sbx_1" };
      expect(await json(await h.call("GET", "/v1/auth/me", { as: sandbox }))).toMatchObject({
        type: "sandbox",
        sandboxId: "sbx_1",
        organizations: [],
      });
      // A sandbox gets nothing else in tenancy.
      expect((await h.call("GET", `/v1/projects/${project.id}`, { as: sandbox })).status).toBe(404);
    });
  });
});
