import type { Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

// Postgres only: ranking is authorization, which does not differ between the engines.
const [postgres] = await databaseTargets();

describe.skipIf(!postgres!.available)(
  `a token acts with the lower of its role and its user's${postgres!.reason}`,
  () => {
    let cleanup: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    beforeAll(async () => {
      const opened = await postgres!.open();
      cleanup = opened.cleanup;
      h = await startActivated(opened.database);
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    async function ownerToken(role: string): Promise<{ id: string; principal: Principal }> {
      const res = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: role, role } });
      expect(res.status).toBe(201);
      const created = await json<{ id: string; token: string }>(res);
      return { id: created.id, principal: await h.principalOf(created.token) };
    }

    it("a lower-role token of the owner cannot revoke the owner's owner-role token", async () => {
      const owner = await ownerToken("owner");
      const admin = await ownerToken("admin");
      const member = await ownerToken("member");
      const viewer = await ownerToken("viewer");
      for (const lower of [admin, member, viewer]) {
        const res = await h.call("DELETE", `/v1/api-tokens/${owner.id}`, { as: lower.principal });
        expect([403, 404]).toContain(res.status);
      }
      // The admin-role token sees the owner's token (it administers the org) but may not change it.
      expect((await h.call("DELETE", `/v1/api-tokens/${owner.id}`, { as: admin.principal })).status).toBe(403);
      expect((await h.call("GET", `/v1/api-tokens/${owner.id}`, { as: admin.principal })).status).toBe(200);
      // A member-role token neither sees nor lists its user's higher tokens, nor revokes the admin one.
      expect((await h.call("GET", `/v1/api-tokens/${owner.id}`, { as: member.principal })).status).toBe(404);
      expect((await h.call("DELETE", `/v1/api-tokens/${admin.id}`, { as: member.principal })).status).toBe(404);
      const listed = await json<{ items: { id: string; role: string }[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/api-tokens`, { as: member.principal }),
      );
      expect(listed.items.map((t) => t.id)).toEqual(expect.arrayContaining([member.id, viewer.id]));
      expect(listed.items.every((t) => t.role === "member" || t.role === "viewer")).toBe(true);
      // Nothing was revoked by the attempts above.
      const still = await json<{ revokedAt?: string }>(
        await h.call("GET", `/v1/api-tokens/${owner.id}`, { as: h.owner }),
      );
      expect(still.revokedAt).toBeUndefined();

      // Equal or higher ranks still may: a token revokes itself, the owner-role token the admin-role one.
      expect((await h.call("DELETE", `/v1/api-tokens/${viewer.id}`, { as: member.principal })).status).toBe(204);
      expect((await h.call("DELETE", `/v1/api-tokens/${member.id}`, { as: member.principal })).status).toBe(204);
      expect((await h.call("DELETE", `/v1/api-tokens/${admin.id}`, { as: owner.principal })).status).toBe(204);
      expect((await h.call("DELETE", `/v1/api-tokens/${owner.id}`, { as: h.owner })).status).toBe(204);
    });

    it("an admin-role token of an owner cannot remove the owner from the organization", async () => {
      // A second owner, so the last-owner rule is not what refuses.
      await addMember(h, h.owner, h.orgId, "second-owner@x.test", "owner");
      const admin = await ownerToken("admin");
      const ownerUserId = h.owner.userId!;
      const res = await h.call("DELETE", `/v1/orgs/${h.orgId}/members/${ownerUserId}`, { as: admin.principal });
      expect(res.status).toBe(403);
      const demote = await h.call("PATCH", `/v1/orgs/${h.orgId}/members/${ownerUserId}`, {
        as: admin.principal,
        body: { role: "admin" },
      });
      expect(demote.status).toBe(403);
      const me = await json<{ role: string }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/members/${ownerUserId}`, { as: h.owner }),
      );
      expect(me.role).toBe("owner");
    });
  },
);
