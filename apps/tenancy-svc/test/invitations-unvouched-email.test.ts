// Without an identity provider, a user made by an invitation link has the email its sender typed:
// an admin of any organization can make one for any address, so that address proves nothing to
// another organization. Such a user answers an invitation only with the invitation's link token.
import type { Principal } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { activatedOnPglite, json } from "./fixtures/harness.ts";

const suite = activatedOnPglite();

function linkToken(acceptUrl: string): string {
  return new URLSearchParams(new URL(acceptUrl).hash.slice(1)).get("token")!;
}

describe("invitations to the address of a user made by a link", () => {
  it("are not listed, accepted or declined by that user without the invitation's link", async () => {
    const { h } = suite;
    const address = "ceo@customer.test";
    const invite = async (orgId: string, role: string) => {
      const res = await h.call("POST", `/v1/orgs/${orgId}/invitations`, {
        as: h.owner,
        body: { email: address, role },
      });
      expect(res.status).toBe(201);
      const { id } = await json<{ id: string }>(res);
      const list = await json<{ items: { id: string; acceptUrl?: string }[] }>(
        await h.call("GET", `/v1/orgs/${orgId}/invitations?limit=200`, { as: h.owner }),
      );
      return { id, token: linkToken(list.items.find((i) => i.id === id)!.acceptUrl!) };
    };

    // The admin of another organization invites the address there and redeems the link themself.
    const other = await json<{ id: string }>(await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "b" } }));
    const squat = await invite(other.id, "viewer");
    const redeemed = await h.call("POST", `/v1/invitations/${squat.id}/redeem`, {
      body: { token: squat.token, displayName: "Not the CEO" },
    });
    expect(redeemed.status).toBe(201);
    const { acceptance } = await json<{ acceptance: { userId: string } }>(redeemed);
    const squatter: Principal = { type: "user", id: acceptance.userId, displayName: "Not the CEO" };

    // The organization invites the real person at that address, as admin.
    const real = await invite(h.orgId, "admin");
    const mine = await json<{ items: unknown[] }>(await h.call("GET", "/v1/invitations", { as: squatter }));
    expect(mine.items).toEqual([]);
    expect((await h.call("POST", `/v1/invitations/${real.id}/decline`, { as: squatter })).status).toBe(404);
    expect((await h.call("POST", `/v1/invitations/${real.id}/accept`, { as: squatter })).status).toBe(404);
    const wrong = await h.call("POST", `/v1/invitations/${real.id}/accept`, {
      as: squatter,
      body: { token: squat.token },
    });
    expect(wrong.status).toBe(404);
    const members = await json<{ items: { userId: string }[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/members?limit=200`, { as: h.owner }),
    );
    expect(members.items.map((m) => m.userId)).not.toContain(squatter.id);

    // Whoever holds the invitation's own link may answer it, signed in as the invited address.
    const withLink = await h.call("POST", `/v1/invitations/${real.id}/accept`, {
      as: squatter,
      body: { token: real.token },
    });
    expect(withLink.status).toBe(200);
  });

  it("are answered by a user whose identity provider vouches for the address, as before", async () => {
    const { h } = suite;
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
      as: h.owner,
      body: { email: "vouched@customer.test", role: "member" },
    });
    const { id } = await json<{ id: string }>(res);
    const user = await h.oidcUser("vouched@customer.test");
    const mine = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/invitations", { as: user }));
    expect(mine.items.map((i) => i.id)).toEqual([id]);
    expect((await h.call("POST", `/v1/invitations/${id}/accept`, { as: user })).status).toBe(200);
  });
});
