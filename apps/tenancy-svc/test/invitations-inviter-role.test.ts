// An invitation grants no more than its sender can still grant: a sender who is demoted or removed
// cannot get back in, or back up, through an invitation sent to an address of their own before.
import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { activatedOnPglite, addMember, json } from "./fixtures/harness.ts";

const suite = activatedOnPglite();

describe("invitations of a member whose role drops", () => {
  it("are revoked above the new role on a demotion, and all of them on a removal", async () => {
    const { h } = suite;
    const events: AuditRecorded[] = [];
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void events.push(e.data));
    const ann = await addMember(h, h.owner, h.orgId, "ann@x.test", "admin");
    const invite = async (email: string, role: string) => {
      const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, { as: ann, body: { email, role } });
      expect(res.status).toBe(201);
      return (await json<{ id: string }>(res)).id;
    };
    const asAdmin = await invite("ann.alt@x.test", "admin");
    const asMember = await invite("ann.other@x.test", "member");
    const accept = async (email: string, invitationId: string) =>
      h.call("POST", `/v1/invitations/${invitationId}/accept`, { as: await h.oidcUser(email) });
    const statusOf = async (invitationId: string) => {
      const list = await json<{ items: { id: string; status: string }[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/invitations?limit=200`, { as: h.owner }),
      );
      return list.items.find((i) => i.id === invitationId)?.status;
    };

    // Demoted to member: the admin invitation goes, the member one stays.
    const demoted = await h.call("PATCH", `/v1/orgs/${h.orgId}/members/${ann.id}`, {
      as: h.owner,
      body: { role: "member" },
    });
    expect(demoted.status).toBe(200);
    expect(await statusOf(asAdmin)).toBe("revoked");
    expect(await statusOf(asMember)).toBe("pending");
    expect((await accept("ann.alt@x.test", asAdmin)).status).toBe(410);

    // Removed: nothing they sent lets anyone in any more.
    expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/members/${ann.id}`, { as: h.owner })).status).toBe(204);
    expect(await statusOf(asMember)).toBe("revoked");
    expect((await accept("ann.other@x.test", asMember)).status).toBe(410);

    await h.settle();
    const revoked = events.filter((e) => e.action === "invitation.revoked").map((e) => e.targetId);
    expect(revoked).toEqual([asAdmin, asMember]);
    expect(events.find((e) => e.targetId === asAdmin && e.action === "invitation.revoked")?.principal.id).toBe(
      h.owner.id,
    );
  });

  it("stay as they were when the sender keeps a role that can grant them", async () => {
    const { h } = suite;
    const ben = await addMember(h, h.owner, h.orgId, "ben@x.test", "owner");
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
      as: ben,
      body: { email: "ben.friend@x.test", role: "admin" },
    });
    const { id } = await json<{ id: string }>(res);
    // An owner stepping down to admin can still grant admin.
    const stepped = await h.call("PATCH", `/v1/orgs/${h.orgId}/members/${ben.id}`, {
      as: h.owner,
      body: { role: "admin" },
    });
    expect(stepped.status).toBe(200);
    const accepted = await h.call("POST", `/v1/invitations/${id}/accept`, {
      as: await h.oidcUser("ben.friend@x.test"),
    });
    expect(accepted.status).toBe(200);
  });
});
