import type { Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

describe.each(targets)("an admin cannot act on a principal of a higher role, on $name", (target) => {
  describe.skipIf(!target.available)(`role ranks${target.reason}`, () => {
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

    async function tokenOf(as: Principal, role: string) {
      const res = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as, body: { name: role, role } });
      expect(res.status).toBe(201);
      return json<{ id: string; token: string }>(res);
    }

    it("refuses an admin revoking the owner's API token (403) and leaves the token working", async () => {
      const admin = await addMember(h, h.owner, h.orgId, "admin-revoke@example.com", "admin");
      const ownerToken = await tokenOf(h.owner, "owner");
      const res = await h.call("DELETE", `/v1/api-tokens/${ownerToken.id}`, { as: admin });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      // Even a token the owner capped below admin acts for the owner.
      const capped = await tokenOf(h.owner, "member");
      expect((await h.call("DELETE", `/v1/api-tokens/${capped.id}`, { as: admin })).status).toBe(403);
      const still = await h.principalOf(ownerToken.token);
      expect(still.type).toBe("api_token");
      // The owner revokes their own token.
      expect((await h.call("DELETE", `/v1/api-tokens/${ownerToken.id}`, { as: h.owner })).status).toBe(204);
    });

    it("lets an admin revoke the token of a member or of another admin, and an owner any token", async () => {
      const admin = await addMember(h, h.owner, h.orgId, "admin-2@example.com", "admin");
      const member = await addMember(h, h.owner, h.orgId, "member-2@example.com", "member");
      const otherAdmin = await addMember(h, h.owner, h.orgId, "admin-3@example.com", "admin");
      const memberToken = await tokenOf(member, "member");
      const adminToken = await tokenOf(otherAdmin, "admin");
      expect((await h.call("DELETE", `/v1/api-tokens/${memberToken.id}`, { as: admin })).status).toBe(204);
      expect((await h.call("DELETE", `/v1/api-tokens/${adminToken.id}`, { as: admin })).status).toBe(204);
      const again = await tokenOf(otherAdmin, "admin");
      expect((await h.call("DELETE", `/v1/api-tokens/${again.id}`, { as: h.owner })).status).toBe(204);
    });

    it("refuses an admin changing the owner's role or removing the owner", async () => {
      const admin = await addMember(h, h.owner, h.orgId, "admin-4@example.com", "admin");
      const ownerId = h.owner.userId ?? h.owner.id;
      const demote = await h.call("PATCH", `/v1/orgs/${h.orgId}/members/${ownerId}`, {
        as: admin,
        body: { role: "viewer" },
      });
      expect(demote.status).toBe(403);
      expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/members/${ownerId}`, { as: admin })).status).toBe(403);
      const promote = await h.call("PATCH", `/v1/orgs/${h.orgId}/members/${admin.id}`, {
        as: admin,
        body: { role: "owner" },
      });
      expect(promote.status).toBe(403);
    });
  });
});
