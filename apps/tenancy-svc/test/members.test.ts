import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const targets = await databaseTargets();

describe.each(targets)("members on $name", (target) => {
  describe.skipIf(!target.available)(`members${target.reason}`, () => {
    let cleanup: () => Promise<void>;
    let h: Awaited<ReturnType<typeof startActivated>>;
    const events: AuditRecorded[] = [];
    beforeAll(async () => {
      const opened = await target.open();
      cleanup = opened.cleanup;
      h = await startActivated(opened.database);
      await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
        events.push(e.data);
      });
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    it("lists and gets members with their roles", async () => {
      const alice = await addMember(h, h.owner, h.orgId, "alice@x.test", "member");
      const list = await json<{ items: { userId: string; role: string; email?: string }[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/members`, { as: alice }),
      );
      expect(list.items).toContainEqual(
        expect.objectContaining({ userId: alice.id, role: "member", email: "alice@x.test" }),
      );
      expect(list.items).toContainEqual(expect.objectContaining({ userId: h.owner.userId, role: "owner" }));
      const one = await h.call("GET", `/v1/orgs/${h.orgId}/members/${alice.id}`, { as: alice });
      expect(await json(one)).toMatchObject({ userId: alice.id, role: "member" });
      expect((await h.call("GET", `/v1/orgs/${h.orgId}/members/usr_nobody`, { as: alice })).status).toBe(404);
    });

    it("changes roles, publishes the change, and guards the owner role", async () => {
      const bob = await addMember(h, h.owner, h.orgId, "bob@x.test", "member");
      const path = `/v1/orgs/${h.orgId}/members/${bob.id}`;
      const res = await h.call("PATCH", path, { as: h.owner, body: { role: "admin" } });
      expect(await json(res)).toMatchObject({ role: "admin" });
      await h.settle();
      expect(events).toContainEqual(
        expect.objectContaining({
          action: "member.role_changed",
          targetId: bob.id,
          details: { from: "member", to: "admin" },
        }),
      );
      // An admin may not create owners nor touch an owner.
      expect((await h.call("PATCH", path, { as: bob, body: { role: "owner" } })).status).toBe(403);
      const ownerPath = `/v1/orgs/${h.orgId}/members/${h.owner.userId}`;
      expect((await h.call("PATCH", ownerPath, { as: bob, body: { role: "member" } })).status).toBe(403);
      expect((await h.call("DELETE", ownerPath, { as: bob })).status).toBe(403);
      expect((await h.call("PATCH", path, { as: h.owner, body: { role: "superuser" } })).status).toBe(400);
    });

    it("never leaves an organization without an owner", async () => {
      const ownerPath = `/v1/orgs/${h.orgId}/members/${h.owner.userId}`;
      const demote = await h.call("PATCH", ownerPath, { as: h.owner, body: { role: "admin" } });
      expect(demote.status).toBe(409);
      expect((await h.call("DELETE", ownerPath, { as: h.owner })).status).toBe(409);
      const carol = await addMember(h, h.owner, h.orgId, "carol@x.test", "owner");
      // With a second owner, the first may step down.
      expect((await h.call("PATCH", ownerPath, { as: carol, body: { role: "admin" } })).status).toBe(200);
      expect((await h.call("PATCH", ownerPath, { as: carol, body: { role: "owner" } })).status).toBe(200);
    });

    it("removes a member with their tokens and team memberships", async () => {
      const dave = await addMember(h, h.owner, h.orgId, "dave@x.test", "member");
      const token = await json<{ token: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: dave, body: { name: "dave's" } }),
      );
      const team = await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/teams`, { as: h.owner, body: { name: "ops" } }),
      );
      await h.call("PUT", `/v1/teams/${team.id}/members/${dave.id}`, { as: h.owner });
      expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/members/${dave.id}`, { as: h.owner })).status).toBe(204);
      expect((await h.internal("POST", "/internal/authn/api-token", { token: token.token })).status).toBe(401);
      const teamNow = await json<{ members: unknown[] }>(await h.call("GET", `/v1/teams/${team.id}`, { as: h.owner }));
      expect(teamNow.members).toEqual([]);
      expect((await h.call("GET", `/v1/orgs/${h.orgId}`, { as: dave })).status).toBe(404);
      await h.settle();
      expect(events).toContainEqual(
        expect.objectContaining({ action: "member.removed", targetId: dave.id, source: "domain" }),
      );
    });
  });
});
