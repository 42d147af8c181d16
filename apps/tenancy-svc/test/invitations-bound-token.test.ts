import { describe, expect, it } from "vitest";
import { activatedOnPglite, addMember, json } from "./fixtures/harness.ts";

/**
 * A token bound to an organization acts in that organization only (it cannot create another one,
 * nor see another one's things): it neither sees its user's invitations to other organizations
 * nor joins or refuses them for the user. The user, or a token bound to nothing, still does.
 */
describe("invitations and a token bound to an organization (PGlite)", () => {
  const suite = activatedOnPglite();

  it("does not list, accept or decline its user's invitations to another organization", async () => {
    const { h } = suite;
    const una = await addMember(h, h.owner, h.orgId, "una@x.test", "member");
    const created = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, {
      as: una,
      body: { name: "ci", scopes: ["sandboxes:read"] },
    });
    expect(created.status).toBe(201);
    const bound = await h.principalOf((await json<{ token: string }>(created)).token);

    const other = await json<{ id: string }>(
      await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "Other" } }),
    );
    const invite = async () => {
      const res = await h.call("POST", `/v1/orgs/${other.id}/invitations`, {
        as: h.owner,
        body: { email: "una@x.test", role: "admin" },
      });
      expect(res.status).toBe(201);
      return (await json<{ id: string }>(res)).id;
    };
    const first = await invite();

    expect(await json(await h.call("GET", "/v1/invitations", { as: bound }))).toEqual({ items: [] });
    for (const answer of ["accept", "decline"]) {
      const res = await h.call("POST", `/v1/invitations/${first}/${answer}`, { as: bound });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
    const members = await json<{ items: { userId: string }[] }>(
      await h.call("GET", `/v1/orgs/${other.id}/members`, { as: h.owner }),
    );
    expect(members.items.map((m) => m.userId)).not.toContain(una.id);

    // The person herself sees and answers it.
    const mine = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/invitations", { as: una }));
    expect(mine.items.map((i) => i.id)).toEqual([first]);
    expect((await h.call("POST", `/v1/invitations/${first}/accept`, { as: una })).status).toBe(200);
  });
});
