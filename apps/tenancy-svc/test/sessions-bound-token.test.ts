import { internalResolveSessionRoute } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";
import { activatedOnPglite, addMember, json } from "./fixtures/harness.ts";

/**
 * A person's browser sessions are theirs, not an organization's: a token bound to an organization
 * (as it sees none of its user's personal tokens) sees and revokes only the sessions opened with
 * it, never the person's own sign-ins.
 */
describe("browser sessions and a token bound to an organization (PGlite)", () => {
  const suite = activatedOnPglite();

  it("neither lists nor revokes its user's other sessions", async () => {
    const { h } = suite;
    const una = await addMember(h, h.owner, h.orgId, "una@x.test", "member");
    const own = await h.call("POST", "/v1/auth/sessions", { as: una });
    expect(own.status).toBe(201);
    const { session } = await json<{ session: { id: string } }>(own);
    const secret = own.headers.get("set-cookie")!.split(";")[0]!.split("=").slice(1).join("=");

    const created = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, {
      as: una,
      body: { name: "ci", scopes: ["sandboxes:read"] },
    });
    const bound = await h.principalOf((await json<{ token: string }>(created)).token);
    const viaToken = await json<{ session: { id: string } }>(await h.call("POST", "/v1/auth/sessions", { as: bound }));

    const listed = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/auth/sessions", { as: bound }));
    expect(listed.items.map((s) => s.id)).toEqual([viaToken.session.id]);
    const revoke = await h.call("DELETE", `/v1/auth/sessions/${session.id}`, { as: bound });
    expect(revoke.status).toBe(404);
    expect((await h.internal("POST", internalResolveSessionRoute.path, { secret })).status).toBe(200);

    // The person sees both, and the token still ends the session opened with it.
    const all = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/auth/sessions", { as: una }));
    expect(all.items.map((s) => s.id).sort()).toEqual([session.id, viaToken.session.id].sort());
    expect((await h.call("DELETE", `/v1/auth/sessions/${viaToken.session.id}`, { as: bound })).status).toBe(204);
  });
});
