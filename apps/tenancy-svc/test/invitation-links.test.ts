import { AUDIT_RECORDED, type AuditRecorded, internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

interface Invitation {
  id: string;
  acceptUrl?: string;
  status: string;
}

function tokenOf(invitation: Invitation): string {
  return new URL(invitation.acceptUrl!).hash.replace(/^#token=/, "");
}

describe("invitation links without an identity provider (PGlite)", () => {
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

  const invite = async (email: string, role = "member") => {
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, { as: h.owner, body: { email, role } });
    expect(res.status).toBe(201);
    return json<Invitation>(res);
  };

  it("hands out a link that previews the invitation and joins a new user by display name", async () => {
    const events: AuditRecorded[] = [];
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
      events.push(e.data);
    });
    const invitation = await invite("Ivy@X.test", "admin");
    expect(invitation.acceptUrl).toMatch(
      new RegExp(`^http://platform\\.test/invitations/${invitation.id}#token=[A-Za-z0-9_-]{43}$`),
    );
    const listed = await json<{ items: Invitation[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/invitations`, { as: h.owner }),
    );
    expect(listed.items.find((i) => i.id === invitation.id)?.acceptUrl).toBe(invitation.acceptUrl);
    const token = tokenOf(invitation);

    const preview = await h.call("POST", `/v1/invitations/${invitation.id}/preview`, { body: { token } });
    expect(await json(preview)).toMatchObject({
      id: invitation.id,
      orgName: "Default",
      email: "Ivy@X.test",
      role: "admin",
      status: "pending",
      signIn: "display-name",
    });
    const wrong = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    expect((await h.call("POST", `/v1/invitations/${invitation.id}/preview`, { body: { token: wrong } })).status).toBe(
      404,
    );
    expect(
      (
        await h.call("POST", `/v1/invitations/${invitation.id}/redeem`, {
          body: { token: wrong, displayName: "Mallory" },
        })
      ).status,
    ).toBe(404);
    const blank = await h.call("POST", `/v1/invitations/${invitation.id}/redeem`, {
      body: { token, displayName: "  " },
    });
    expect(blank.status).toBe(400);
    expect((await json<{ errors: { pointer: string }[] }>(blank)).errors[0]?.pointer).toBe("/body/displayName");
    // Shown to every member and in the audit trail: no marks that reorder it ("Ivy\u202enimdA").
    for (const displayName of ["Ivy\u202enimdA", "Ivy\u2067Admin", "Ivy\u0008"]) {
      const hidden = await h.call("POST", `/v1/invitations/${invitation.id}/redeem`, { body: { token, displayName } });
      expect(hidden.status, JSON.stringify(displayName)).toBe(400);
    }

    const redeemed = await h.call("POST", `/v1/invitations/${invitation.id}/redeem`, {
      body: { token, displayName: "Ivy Invitee" },
      headers: { "user-agent": "test-browser" },
    });
    expect(redeemed.status).toBe(201);
    const cookie = redeemed.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^agentplane_session=aps_[0-9a-z]{26}_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax/);
    const body = await json<{
      acceptance: { userId: string; role: string; orgId: string };
      session: { via: string; userId: string };
      csrfToken: string;
    }>(redeemed);
    expect(body.acceptance).toMatchObject({ invitationId: invitation.id, orgId: h.orgId, role: "admin" });
    expect(body.session).toMatchObject({ via: "invitation", userId: body.acceptance.userId });

    // The session is the new user's, a member with the invited role.
    const secret = cookie.split(";")[0]!.split("=")[1]!;
    const resolved = await json<{ principal: { type: string; id: string }; csrfToken: string }>(
      await h.internal("POST", internalResolveSessionRoute.path, { secret }),
    );
    expect(resolved.principal).toMatchObject({ type: "user", id: body.acceptance.userId });
    expect(resolved.csrfToken).toBe(body.csrfToken);
    const me = await json<{ email: string; displayName: string; organizations: { id: string; role: string }[] }>(
      await h.call("GET", "/v1/auth/me", { as: resolved.principal as never }),
    );
    expect(me).toMatchObject({ email: "Ivy@X.test", displayName: "Ivy Invitee" });
    expect(me.organizations).toContainEqual(expect.objectContaining({ id: h.orgId, role: "admin" }));

    // One use: the link cannot join a second person, and it is no longer offered in the list.
    const again = await h.call("POST", `/v1/invitations/${invitation.id}/redeem`, {
      body: { token, displayName: "Someone Else" },
    });
    expect(again.status).toBe(409);
    const after = await json<{ items: Invitation[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/invitations`, { as: h.owner }),
    );
    expect(after.items.find((i) => i.id === invitation.id)).toMatchObject({ status: "accepted" });
    expect(after.items.find((i) => i.id === invitation.id)?.acceptUrl).toBeUndefined();

    await h.settle();
    expect(events).toContainEqual(
      expect.objectContaining({
        action: "invitation.accepted",
        targetId: invitation.id,
        orgId: h.orgId,
        principal: expect.objectContaining({ type: "user", id: body.acceptance.userId }),
      }),
    );
  });

  it("joins the invited person though someone else made a user of their address first", async () => {
    // The owner of another organization invites the address there and redeems the link themself.
    const other = await json<{ id: string }>(await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "b" } }));
    const squat = await json<Invitation>(
      await h.call("POST", `/v1/orgs/${other.id}/invitations`, {
        as: h.owner,
        body: { email: "CEO@corp.test", role: "member" },
      }),
    );
    const squatted = await h.call("POST", `/v1/invitations/${squat.id}/redeem`, {
      body: { token: tokenOf(squat), displayName: "Not the CEO" },
    });
    expect(squatted.status).toBe(201);
    const squatter = (await json<{ acceptance: { userId: string } }>(squatted)).acceptance.userId;

    // The real person opens the link this organization sent to the address: they join, as themself.
    const real = await invite("ceo@corp.test", "admin");
    const joined = await h.call("POST", `/v1/invitations/${real.id}/redeem`, {
      body: { token: tokenOf(real), displayName: "The CEO" },
    });
    expect(joined.status).toBe(201);
    const { acceptance } = await json<{ acceptance: { userId: string; orgId: string; role: string } }>(joined);
    expect(acceptance).toMatchObject({ orgId: h.orgId, role: "admin" });
    expect(acceptance.userId).not.toBe(squatter);
    const members = await json<{ items: { userId: string; role: string }[] }>(
      await h.call("GET", `/v1/orgs/${h.orgId}/members?limit=200`, { as: h.owner }),
    );
    expect(members.items).toContainEqual(expect.objectContaining({ userId: acceptance.userId, role: "admin" }));
    expect(members.items.map((m) => m.userId)).not.toContain(squatter);
  });

  it("refuses revoked invitations", async () => {
    const revoked = await invite("rex@x.test");
    expect((await h.call("DELETE", `/v1/orgs/${h.orgId}/invitations/${revoked.id}`, { as: h.owner })).status).toBe(204);
    const res = await h.call("POST", `/v1/invitations/${revoked.id}/redeem`, {
      body: { token: tokenOf(revoked), displayName: "Rex" },
    });
    expect(res.status).toBe(410);
  });

  it("tells a link's holder nothing of a user an identity provider signed in (turned off since)", async () => {
    // Signed in through the identity provider while it was configured; this installation has none now.
    const known = await h.oidcUser("known@x.test");
    const redeem = async (email: string, displayName: string) => {
      const invitation = await invite(email);
      const res = await h.call("POST", `/v1/invitations/${invitation.id}/redeem`, {
        body: { token: tokenOf(invitation), displayName },
      });
      return {
        status: res.status,
        body: await json<Record<string, unknown>>(res),
        cookie: res.headers.get("set-cookie"),
      };
    };
    // An admin redeeming links of their own: the known user's address answers as a fresh one does.
    const taken = await redeem("Known@X.test", "Impostor");
    const fresh = await redeem("nobody-yet@x.test", "Someone");
    expect(taken.status).toBe(201);
    expect(fresh.status).toBe(201);
    expect(Object.keys(taken.body).sort()).toEqual(Object.keys(fresh.body).sort());
    expect(JSON.stringify(taken.body)).not.toMatch(/account|identity provider|sign in/i);
    const impostor = (taken.body.acceptance as { userId: string }).userId;
    expect(impostor).not.toBe(known.id);

    // The link's new user is not the known one and gets nothing addressed to the known one.
    const secret = taken.cookie!.split(";")[0]!.split("=")[1]!;
    const resolved = await json<{ principal: { id: string } }>(
      await h.internal("POST", internalResolveSessionRoute.path, { secret }),
    );
    expect(resolved.principal.id).toBe(impostor);
    const other = await json<{ id: string }>(await h.call("POST", "/v1/orgs", { as: h.owner, body: { name: "o" } }));
    const elsewhere = await json<Invitation>(
      await h.call("POST", `/v1/orgs/${other.id}/invitations`, { as: h.owner, body: { email: "known@x.test" } }),
    );
    const listedFor = async (as: Principal) =>
      (await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/invitations", { as }))).items.map((i) => i.id);
    expect(await listedFor(known)).toContain(elsewhere.id);
    expect(await listedFor(resolved.principal as Principal)).not.toContain(elsewhere.id);
    const accept = await h.call("POST", `/v1/invitations/${elsewhere.id}/accept`, {
      as: resolved.principal as Principal,
    });
    expect(accept.status).toBe(404);
  });
});

describe("invitation links with an identity provider (PGlite)", () => {
  let database: Database;
  let h: Awaited<ReturnType<typeof startActivated>>;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    // Discovery is lazy: no provider needs to answer for the link to say how to accept.
    h = await startActivated(database, { oidc: { issuer: "http://127.0.0.1:9/idp", clientId: "console" } });
  });
  afterAll(async () => {
    await stopTenancies();
    await database.close();
  });

  it("asks the invitee to sign in with the provider and binds the invitation to that identity", async () => {
    const created = await json<Invitation>(
      await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, { as: h.owner, body: { email: "oz@x.test" } }),
    );
    const token = tokenOf(created);
    const preview = await json(await h.call("POST", `/v1/invitations/${created.id}/preview`, { body: { token } }));
    expect(preview).toMatchObject({ signIn: "oidc", email: "oz@x.test" });
    const redeem = await h.call("POST", `/v1/invitations/${created.id}/redeem`, {
      body: { token, displayName: "Oz" },
    });
    expect(redeem.status).toBe(409);
    expect(redeem.headers.get("set-cookie")).toBeNull();

    const oz = await h.oidcUser("oz@x.test");
    const accepted = await h.call("POST", `/v1/invitations/${created.id}/accept`, { as: oz });
    expect(await json(accepted)).toMatchObject({ userId: oz.id, orgId: h.orgId, role: "member" });
    expect(await json(await h.call("GET", "/v1/installation"))).toMatchObject({ oidcSignIn: true });
  });
});
