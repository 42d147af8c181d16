import { databaseTargets } from "@agentplane/db/testing";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { signClusterJwt } from "./fixtures/cluster-jwt.ts";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

describe.each(targets)("projects and keys on $name", (target) => {
  describe.skipIf(!target.available)(`projects${target.reason}`, () => {
    let cleanup: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      h = await startActivated(opened.database, { keyRotationGraceSeconds: 1 });
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    it("creates, lists, gets, updates and deletes a project", async () => {
      const res = await h.call("POST", `/v1/orgs/${h.orgId}/projects`, {
        as: h.owner,
        body: { name: "payments", description: "the payments agents" },
      });
      expect(res.status).toBe(201);
      const project = await json<{ id: string; role: string }>(res);
      expect(project).toMatchObject({ orgId: h.orgId, name: "payments", role: "admin" });
      const list = await json<{ items: { id: string }[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/projects`, { as: h.owner }),
      );
      expect(list.items.map((p) => p.id)).toContain(project.id);
      const patched = await h.call("PATCH", `/v1/projects/${project.id}`, { as: h.owner, body: { name: "billing" } });
      expect(await json(patched)).toMatchObject({ name: "billing", description: "the payments agents" });
      expect((await h.call("PATCH", `/v1/projects/${project.id}`, { as: h.owner, body: { nam: "x" } })).status).toBe(
        400,
      );
      expect((await h.call("DELETE", `/v1/projects/${project.id}`, { as: h.owner })).status).toBe(204);
      expect((await h.call("GET", `/v1/projects/${project.id}`, { as: h.owner })).status).toBe(404);
    });

    it("lists each project with the caller's role on it, as getProject does", async () => {
      const project = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "roles" } }),
      );
      const roleIn = async (as: typeof h.owner) => {
        const list = await json<{ items: { id: string; role?: string }[] }>(
          await h.call("GET", `/v1/orgs/${h.orgId}/projects?limit=100`, { as }),
        );
        return list.items.find((p) => p.id === project.id)?.role;
      };
      expect(await roleIn(h.owner)).toBe("admin");
      const member = await addMember(h, h.owner, h.orgId, "lister@example.test", "member");
      expect(await roleIn(member)).toBe("viewer");
      const team = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/teams`, { as: h.owner, body: { name: "listers" } }),
      );
      expect((await h.call("PUT", `/v1/teams/${team.id}/members/${member.id}`, { as: h.owner })).status).toBe(200);
      const granted = await h.call("PUT", `/v1/teams/${team.id}/projects/${project.id}`, {
        as: h.owner,
        body: { role: "developer" },
      });
      expect(granted.status).toBe(200);
      expect(await roleIn(member)).toBe("developer");
    });

    it("publishes the key, keeps the previous one through the grace period, then drops it", async () => {
      const project = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "keys" } }),
      );
      const pk = await json<{ kid: string; pem: string; jwk: Record<string, string> }>(
        await h.call("GET", `/v1/projects/${project.id}/public-key`, { as: h.owner }),
      );
      expect(pk.pem).toContain("BEGIN PUBLIC KEY");
      expect(pk.jwk).toMatchObject({ kty: "EC", crv: "P-256", kid: pk.kid, alg: "ES256", use: "sig" });
      expect(pk.jwk.d).toBeUndefined();

      const jwksPath = `/v1/projects/${project.id}/.well-known/jwks.json`;
      const before = await json<JSONWebKeySet>(await h.call("GET", jwksPath, { as: h.owner }));
      expect(before.keys.map((k) => k.kid)).toEqual([pk.kid]);

      const tokenBefore = await signClusterJwt(h.service, project.id, "cl_one");
      const rotated = await h.call("POST", `/v1/projects/${project.id}/rotate-keys`, { as: h.owner });
      expect(rotated.status).toBe(200);
      const rotation = await json<{ kid: string; previousKid: string }>(rotated);
      expect(rotation.previousKid).toBe(pk.kid);

      const during = await json<JSONWebKeySet>(await h.call("GET", jwksPath, { as: h.owner }));
      expect(during.keys.map((k) => k.kid)).toEqual([rotation.kid, pk.kid]);
      // A token signed before the rotation still verifies during the grace period, and a new one too.
      const tokenAfter = await signClusterJwt(h.service, project.id, "cl_one");
      for (const token of [tokenBefore, tokenAfter]) {
        const { payload } = await jwtVerify(token, createLocalJWKSet(during), { audience: "agentplane-control-plane" });
        expect(payload.sub).toBe("cl_one");
      }
      const internal = await json<{ orgId: string; keys: { kid: string }[] }>(
        await h.internal("GET", `/internal/projects/${project.id}/verification-keys`),
      );
      expect(internal.orgId).toBe(h.orgId);
      expect(internal.keys.map((k) => k.kid)).toEqual([rotation.kid, pk.kid]);

      // The grace (1 s) ends on the database's clock: the old key leaves the set then.
      const after = await vi.waitFor(
        async () => {
          const keys = await json<JSONWebKeySet>(await h.call("GET", jwksPath, { as: h.owner }));
          expect(keys.keys.map((k) => k.kid)).toEqual([rotation.kid]);
          return keys;
        },
        { timeout: 5000, interval: 50 },
      );
      await expect(jwtVerify(tokenBefore, createLocalJWKSet(after))).rejects.toThrow();

      // The cluster itself may read its project's keys, and nothing else.
      const cluster = { type: "cluster" as const, id: "cl_one", projectId: project.id, orgId: h.orgId };
      expect((await h.call("GET", jwksPath, { as: cluster })).status).toBe(200);
      expect((await h.call("POST", `/v1/projects/${project.id}/rotate-keys`, { as: cluster })).status).toBe(403);
      expect((await h.call("GET", `/v1/orgs/${h.orgId}/projects`, { as: cluster })).status).toBe(404);
    });

    it("stores private keys encrypted", async () => {
      const project = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "enc" } }),
      );
      const row = await h.service.context.db
        .selectFrom("signing_keys")
        .selectAll()
        .where("project_id", "=", project.id)
        .executeTakeFirstOrThrow();
      expect(row.private_key_enc).toMatch(/^v1\./);
      expect(row.private_key_enc).not.toContain("PRIVATE KEY");
      expect(row.public_jwk).not.toContain('"d"');
    });
  });
});
