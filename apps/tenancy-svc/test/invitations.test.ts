import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { addMember, json, startActivated, startTenancy, stopTenancies } from "./fixtures/harness.ts";

describe("invitations (PGlite)", () => {
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

  it("invites, shows the invitation to the invitee only, and joins on accept", async () => {
    const events: AuditRecorded[] = [];
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
      events.push(e.data);
    });
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
      as: h.owner,
      body: { email: "Frank@X.test", role: "admin" },
    });
    expect(res.status).toBe(201);
    const invitation = await json<{ id: string; expiresAt: string }>(res);
    expect(invitation).toMatchObject({ status: "pending", role: "admin", email: "Frank@X.test" });
    const week = Date.parse(invitation.expiresAt) - Date.now();
    expect(week).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(week).toBeLessThanOrEqual(7 * 86_400_000);

    const frank = await h.oidcUser("frank@x.test");
    const other = await h.oidcUser("other@x.test");
    const mine = await json<{ items: { id: string; orgName: string }[] }>(
      await h.call("GET", "/v1/invitations", { as: frank }),
    );
    expect(mine.items).toEqual([expect.objectContaining({ id: invitation.id, orgName: "Default" })]);
    expect(await json(await h.call("GET", "/v1/invitations", { as: other }))).toEqual({ items: [] });
    expect((await h.call("POST", `/v1/invitations/${invitation.id}/accept`, { as: other })).status).toBe(404);

    const accepted = await h.call("POST", `/v1/invitations/${invitation.id}/accept`, { as: frank });
    expect(await json(accepted)).toEqual({
      invitationId: invitation.id,
      orgId: h.orgId,
      userId: frank.id,
      role: "admin",
    });
    expect((await h.call("POST", `/v1/invitations/${invitation.id}/accept`, { as: frank })).status).toBe(409);
    expect((await h.call("PATCH", `/v1/orgs/${h.orgId}`, { as: frank, body: { name: "Renamed" } })).status).toBe(200);
    await h.settle();
    expect(events).toContainEqual(expect.objectContaining({ action: "invitation.accepted", targetId: invitation.id }));
  });

  it("declines and revokes; rejects duplicates and roles above the inviter's", async () => {
    const admin = await addMember(h, h.owner, h.orgId, "gina@x.test", "admin");
    const path = `/v1/orgs/${h.orgId}/invitations`;
    expect((await h.call("POST", path, { as: admin, body: { email: "o@x.test", role: "owner" } })).status).toBe(403);
    expect((await h.call("POST", path, { as: admin, body: { email: "gina@x.test" } })).status).toBe(409);
    expect((await h.call("POST", path, { as: admin, body: { email: "not-an-email" } })).status).toBe(400);

    const first = await json<{ id: string }>(await h.call("POST", path, { as: admin, body: { email: "hank@x.test" } }));
    expect((await h.call("POST", path, { as: admin, body: { email: "hank@x.test" } })).status).toBe(409);
    const hank = await h.oidcUser("hank@x.test");
    expect((await h.call("POST", `/v1/invitations/${first.id}/decline`, { as: hank })).status).toBe(204);
    expect((await h.call("POST", `/v1/invitations/${first.id}/accept`, { as: hank })).status).toBe(409);
    expect((await h.call("GET", `/v1/orgs/${h.orgId}`, { as: hank })).status).toBe(404);

    const second = await json<{ id: string }>(
      await h.call("POST", path, { as: admin, body: { email: "hank@x.test" } }),
    );
    expect((await h.call("DELETE", `${path}/${second.id}`, { as: admin })).status).toBe(204);
    expect((await h.call("DELETE", `${path}/${second.id}`, { as: admin })).status).toBe(409);
    expect((await h.call("POST", `/v1/invitations/${second.id}/accept`, { as: hank })).status).toBe(410);
    const all = await json<{ items: { id: string; status: string }[] }>(await h.call("GET", path, { as: admin }));
    expect(all.items).toContainEqual(expect.objectContaining({ id: first.id, status: "declined" }));
    expect(all.items).toContainEqual(expect.objectContaining({ id: second.id, status: "revoked" }));
  });

  it("expires invitations", async () => {
    const short = await startTenancy(database, { invitationTtlSeconds: 1 });
    const res = await short.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
      as: h.owner,
      body: { email: "ivy@x.test" },
    });
    const invitation = await json<{ id: string }>(res);
    // Past the one-second lifetime on a clock moved forward, not by waiting.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 1100);
      const ivy = await short.oidcUser("ivy@x.test");
      expect(await json(await short.call("GET", "/v1/invitations", { as: ivy }))).toEqual({ items: [] });
      expect((await short.call("POST", `/v1/invitations/${invitation.id}/accept`, { as: ivy })).status).toBe(410);
      const listed = await json<{ items: { id: string; status: string }[] }>(
        await short.call("GET", `/v1/orgs/${h.orgId}/invitations`, { as: h.owner }),
      );
      expect(listed.items).toContainEqual(expect.objectContaining({ id: invitation.id, status: "expired" }));
    } finally {
      vi.useRealTimers();
    }
  });
});
