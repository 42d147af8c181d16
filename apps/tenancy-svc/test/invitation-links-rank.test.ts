import type { Invitation } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { activatedOnPglite, addMember, json } from "./fixtures/harness.ts";

/**
 * An invitation's link lets its holder join with the invitation's role (without an identity
 * provider, as a new user). Only who could have sent the invitation gets its link: an admin who
 * copied an owner's invitation link could redeem it and own the organization.
 */
describe("invitation links above the caller's role (PGlite)", () => {
  const suite = activatedOnPglite();

  it("an admin neither lists the link of an owner invitation nor revokes it", async () => {
    const { h } = suite;
    const admin = await addMember(h, h.owner, h.orgId, "ada@x.test", "admin");
    const path = `/v1/orgs/${h.orgId}/invitations`;
    const owner = await json<Invitation>(
      await h.call("POST", path, { as: h.owner, body: { email: "olga@x.test", role: "owner" } }),
    );
    expect(owner.acceptUrl).toBeDefined();
    const member = await json<Invitation>(
      await h.call("POST", path, { as: admin, body: { email: "max@x.test", role: "member" } }),
    );

    const seen = await json<{ items: Invitation[] }>(await h.call("GET", path, { as: admin }));
    const byId = new Map(seen.items.map((i) => [i.id, i]));
    expect(byId.get(owner.id)).toBeDefined();
    expect(byId.get(owner.id)!.acceptUrl).toBeUndefined();
    expect(byId.get(member.id)!.acceptUrl).toBeDefined();
    const ownersView = await json<{ items: Invitation[] }>(await h.call("GET", path, { as: h.owner }));
    expect(ownersView.items.find((i) => i.id === owner.id)!.acceptUrl).toBe(owner.acceptUrl);

    const revoke = await h.call("DELETE", `${path}/${owner.id}`, { as: admin });
    expect(revoke.status).toBe(403);
    expect(revoke.headers.get("content-type")).toContain("application/problem+json");
    expect((await h.call("DELETE", `${path}/${member.id}`, { as: admin })).status).toBe(204);
    expect((await h.call("DELETE", `${path}/${owner.id}`, { as: h.owner })).status).toBe(204);
  });
});
