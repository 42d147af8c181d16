import type { Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

describe.each(targets)("API tokens on $name", (target) => {
  describe.skipIf(!target.available)(`API tokens${target.reason}`, () => {
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

    it("creates a token shown once, resolves it, lists and revokes it", async () => {
      const res = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, {
        as: h.owner,
        body: { name: "ci", role: "member" },
      });
      expect(res.status).toBe(201);
      const created = await json<{ id: string; token: string; prefix: string; role: string }>(res);
      expect(created.token).toMatch(/^apl_[0-9a-z]{26}_/);
      expect(created.token.startsWith(created.prefix)).toBe(true);
      expect(created.role).toBe("member");

      const principal = await h.principalOf(created.token);
      expect(principal).toMatchObject({ type: "api_token", id: created.id, orgId: h.orgId, role: "member" });

      const listed = await json<{ items: Record<string, unknown>[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner }),
      );
      const item = listed.items.find((t) => t.id === created.id)!;
      expect(item).toBeDefined();
      expect(item.token).toBeUndefined();
      expect(JSON.stringify(listed)).not.toContain(created.token.slice(31));
      expect(item.lastUsedAt).toBeDefined();

      const got = await h.call("GET", `/v1/api-tokens/${created.id}`, { as: h.owner });
      expect(got.status).toBe(200);
      expect((await json(got)).token).toBeUndefined();

      // A member-capped token cannot manage the org.
      const renamed = await h.call("PATCH", `/v1/orgs/${h.orgId}`, { as: principal, body: { name: "x" } });
      expect(renamed.status).toBe(403);

      expect((await h.call("DELETE", `/v1/api-tokens/${created.id}`, { as: h.owner })).status).toBe(204);
      const after = await h.internal("POST", "/internal/authn/api-token", { token: created.token });
      expect(after.status).toBe(401);
      const revoked = await json(await h.call("GET", `/v1/api-tokens/${created.id}`, { as: h.owner }));
      expect(revoked.revokedAt).toBeDefined();
    });

    it("rejects tampered, unknown and expired tokens", async () => {
      const created = await json<{ token: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "short" } }),
      );
      const last = created.token.at(-1) === "A" ? "B" : "A";
      const tampered = created.token.slice(0, -1) + last;
      for (const token of [tampered, "apl_nope", "", "x".repeat(40)]) {
        expect((await h.internal("POST", "/internal/authn/api-token", { token })).status).toBe(401);
      }
      const soon = new Date(Date.now() + 1500).toISOString();
      const expiring = await json<{ token: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "e", expiresAt: soon } }),
      );
      expect((await h.internal("POST", "/internal/authn/api-token", { token: expiring.token })).status).toBe(200);
      // Past its expiry on a clock moved forward, not by waiting.
      vi.useFakeTimers({ toFake: ["Date"] });
      try {
        vi.setSystemTime(Date.now() + 1600);
        expect((await h.internal("POST", "/internal/authn/api-token", { token: expiring.token })).status).toBe(401);
      } finally {
        vi.useRealTimers();
      }
    });

    it("validates the body: unknown fields, past expiry, foreign project, role above the creator", async () => {
      const path = `/v1/orgs/${h.orgId}/api-tokens`;
      const unknown = await h.call("POST", path, { as: h.owner, body: { name: "a", permissions: ["*"] } });
      expect(unknown.status).toBe(400);
      expect((await json<{ errors: { pointer: string }[] }>(unknown)).errors[0]!.pointer).toBe("/body/permissions");
      // Scopes are permission names; anything else is named in the error.
      const badScope = await h.call("POST", path, { as: h.owner, body: { name: "a", scopes: ["llm:invoke", "*"] } });
      expect(badScope.status).toBe(400);
      expect((await json<{ errors: { pointer: string }[] }>(badScope)).errors[0]!.pointer).toBe("/body/scopes/1");
      const past = await h.call("POST", path, { as: h.owner, body: { name: "a", expiresAt: "2001-01-01T00:00:00Z" } });
      expect(past.status).toBe(400);
      const project = await h.call("POST", path, { as: h.owner, body: { name: "a", projectId: "prj_missing" } });
      expect(project.status).toBe(400);
      const viewer = await h.principalOf(
        (
          await json<{ token: string }>(
            await h.call("POST", path, { as: h.owner, body: { name: "viewer", role: "viewer" } }),
          )
        ).token,
      );
      // A viewer-capped token is below api-tokens:manage (member).
      expect((await h.call("POST", path, { as: viewer, body: { name: "b" } })).status).toBe(403);
      const member = await h.principalOf(
        (
          await json<{ token: string }>(
            await h.call("POST", path, { as: h.owner, body: { name: "m", role: "member" } }),
          )
        ).token,
      );
      const above = await h.call("POST", path, { as: member, body: { name: "b", role: "admin" } });
      expect(above.status).toBe(403);
    });

    it("restricts a project-bound token to its project", async () => {
      const a = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "a" } }),
      );
      const b = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "b" } }),
      );
      const created = await json<{ token: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, {
          as: h.owner,
          body: { name: "deploy", role: "admin", projectId: a.id },
        }),
      );
      const bound: Principal = await h.principalOf(created.token);
      expect(bound.projectId).toBe(a.id);
      expect((await h.call("GET", `/v1/projects/${a.id}`, { as: bound })).status).toBe(200);
      expect((await h.call("GET", `/v1/projects/${b.id}`, { as: bound })).status).toBe(404);
      const list = await json<{ items: { id: string }[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/projects`, { as: bound }),
      );
      expect(list.items.map((p) => p.id)).toEqual([a.id]);
      expect((await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: bound, body: { name: "c" } })).status).toBe(
        403,
      );
    });
  });
});
