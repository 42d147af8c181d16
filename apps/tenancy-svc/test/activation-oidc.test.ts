import { internalResolveOidcUserRoute, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startTenancy, stopTenancies } from "./fixtures/harness.ts";
import { startOidcProvider } from "./fixtures/oidc-provider.ts";

const CLIENT_ID = "agentplane-activation";
const CLIENT_SECRET = "s3cret/with+chars";

describe("activation approved by OIDC sign-in (PGlite, local identity provider)", () => {
  let database: Database;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let h: Harness;
  let session: { sessionId: string; userCode: string };

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    database = await openDatabase("pglite://memory");
    h = await startTenancy(database, {
      activationIntervalSeconds: 1,
      oidc: { issuer: provider.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    });
    session = await json(await h.call("POST", "/v1/installation/activation"));
  });
  afterAll(async () => {
    await stopTenancies();
    await database?.close();
    await provider?.close();
  });

  /** Starts the sign-in from the page; answers the provider's redirect back and the sealed cookie. */
  async function startSignIn(userCode: string): Promise<{ callback: URL; cookie: string }> {
    const res = await h.call("POST", "/activate", {
      body: new URLSearchParams({
        userCode,
        setupCode: h.service.setupCode!,
        method: "oidc",
        orgName: "Acme",
      }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.url}/authorize`);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\/activate/);
    // The provider signs the operator in at once and redirects back with a code.
    const authorized = await fetch(location, { redirect: "manual" });
    expect(authorized.status).toBe(302);
    return { callback: new URL(authorized.headers.get("location")!), cookie: setCookie.split(";")[0]! };
  }

  function callback(url: URL, cookie?: string): Promise<Response> {
    return h.call("GET", `${url.pathname}${url.search}`, cookie ? { headers: { cookie } } : {});
  }

  async function installationStatus(): Promise<string> {
    return (await json<{ status: string }>(await h.call("GET", "/v1/installation"))).status;
  }

  it("offers the sign-in on the page and sends a PKCE (S256) authorization request", async () => {
    const page = await (await h.call("GET", `/activate?code=${session.userCode}`)).text();
    expect(page).toContain("Sign in with your identity provider");
    const { callback: back } = await startSignIn(session.userCode);
    expect(back.pathname).toBe("/activate/callback");
    const request = provider.state.authorizeRequests.at(-1)!;
    expect(request.get("redirect_uri")).toBe("http://platform.test/activate/callback");
    expect(request.get("scope")).toContain("openid");
    expect(request.get("code_challenge_method")).toBe("S256");
    expect(request.get("state")?.length).toBeGreaterThanOrEqual(43);
    expect(request.get("nonce")?.length).toBeGreaterThanOrEqual(43);
  });

  it("refuses to start a sign-in for an unknown activation code", async () => {
    const res = await h.call("POST", "/activate", {
      body: new URLSearchParams({ userCode: "BBBB-BBBB", setupCode: h.service.setupCode!, method: "oidc" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("asks for the setup code before any sign-in: an account at the provider alone does not activate", async () => {
    const form = (fields: Record<string, string>) =>
      h.call("POST", "/activate", {
        body: new URLSearchParams({ userCode: session.userCode, method: "oidc", ...fields }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
    const requests = provider.state.authorizeRequests.length;
    const missing = await form({});
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("Both codes are required");
    const wrong = await form({ setupCode: "AAAA-AAAA-AAAA" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("4 attempt(s) left");
    for (const res of [missing, wrong]) expect(res.headers.get("set-cookie")).toBeNull();
    // Nobody was sent to the provider, and the wrong code counted as one on the approval form would.
    expect(provider.state.authorizeRequests.length).toBe(requests);
    expect(await installationStatus()).toBe("unactivated");
  });

  it("does not approve on a wrong state, a missing cookie, a wrong nonce, a wrong audience or a foreign key", async () => {
    const wrongState = await startSignIn(session.userCode);
    wrongState.callback.searchParams.set("state", "not-the-state-we-sent");
    const r1 = await callback(wrongState.callback, wrongState.cookie);
    expect(r1.status).toBe(400);
    expect(await r1.text()).toContain("does not match");

    // The same redirect opened in another browser (no cookie), e.g. a sign-in link sent to someone.
    const noCookie = await startSignIn(session.userCode);
    expect((await callback(noCookie.callback)).status).toBe(400);

    provider.state.tamper = { nonce: "a-nonce-from-another-sign-in" };
    const wrongNonce = await startSignIn(session.userCode);
    const r3 = await callback(wrongNonce.callback, wrongNonce.cookie);
    expect(r3.status).toBe(400);
    expect(await r3.text()).toContain("not issued for this sign-in");

    provider.state.tamper = { aud: "another-client" };
    const wrongAudience = await startSignIn(session.userCode);
    const r4 = await callback(wrongAudience.callback, wrongAudience.cookie);
    expect(r4.status).toBe(400);
    expect(await r4.text()).toContain("could not be verified");

    provider.state.tamper = { foreignKey: true };
    const forged = await startSignIn(session.userCode);
    expect((await callback(forged.callback, forged.cookie)).status).toBe(400);
    provider.state.tamper = {};

    expect(await installationStatus()).toBe("unactivated");
    // The failures above were refused before or after the code exchange, never approved.
    expect(provider.state.tokenRequests).toBe(3);
  });

  it("approves with a verified sign-in: the signed-in identity becomes the first owner", async () => {
    const signIn = await startSignIn(session.userCode);
    const res = await callback(signIn.callback, signIn.cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Installation activated");
    expect(res.headers.get("set-cookie")).toMatch(/agentplane_activation=;/);
    expect(await installationStatus()).toBe("activated");

    // A replayed callback (same code and cookie) approves nothing more.
    const replay = await callback(signIn.callback, signIn.cookie);
    expect(replay.status).not.toBe(200);

    const polled = await json<{ status: string; token?: string; userId?: string }>(
      await h.call("GET", `/v1/installation/activation/${session.sessionId}`),
    );
    expect(polled).toMatchObject({ status: "approved" });
    expect(polled.token).toMatch(/^apl_/);
    const owner = await h.principalOf(polled.token!);
    const me = await json(await h.call("GET", "/v1/auth/me", { as: owner }));
    expect(me).toMatchObject({ email: "ops@acme.test", organizations: [{ name: "Acme", role: "owner" }] });

    // The gateway finds the same user when the operator later presents an OIDC token (iss, sub).
    const resolved = await h.internal("POST", internalResolveOidcUserRoute.path, {
      issuer: provider.url,
      subject: "operator-1",
    });
    const { principal } = await json<{ principal: Principal }>(resolved);
    expect(principal.id).toBe(polled.userId);
    expect(principal.displayName).toBe("Olga Operator");
  });
});
