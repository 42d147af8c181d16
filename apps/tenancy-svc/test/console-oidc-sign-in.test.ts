import { AUDIT_RECORDED, type AuditRecorded, internalResolveSessionRoute } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const CLIENT_ID = "agentplane-console";
const CLIENT_SECRET = "console-secret";

describe("console sign-in with the identity provider (PGlite, local identity provider)", () => {
  let database: Database;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let h: Awaited<ReturnType<typeof startActivated>>;
  const events: AuditRecorded[] = [];

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    database = await openDatabase("pglite://memory");
    h = await startActivated(database, {
      oidc: { issuer: provider.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    });
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
      events.push(e.data);
    });
  });

  /** Where a test's records start: after everything an earlier test recorded has been relayed. */
  async function mark(): Promise<number> {
    await h.settle();
    return events.length;
  }

  /** The sign-in records published since `from`, once the outbox has been relayed. */
  async function signInRecords(from: number): Promise<AuditRecorded[]> {
    await h.settle();
    return events.slice(from).filter((e) => e.action.startsWith("session."));
  }
  afterAll(async () => {
    await stopTenancies();
    await database?.close();
    await provider?.close();
  });

  /** The browser's way: start at /sign-in/oidc, let the provider sign in, come back to the callback. */
  async function signIn(next: string) {
    const start = await h.call("GET", `/sign-in/oidc?next=${encodeURIComponent(next)}`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("location")!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${provider.url}/authorize`);
    const state = start.headers.get("set-cookie") ?? "";
    expect(state).toMatch(/HttpOnly/i);
    expect(state).toMatch(/Path=\/sign-in\/oidc\/callback/);
    const back = await fetch(authorize, { redirect: "manual" });
    const callback = new URL(back.headers.get("location")!);
    return { callback, cookie: state.split(";")[0]! };
  }

  it("signs in with authorization code + PKCE, opens a session for the identity's user and returns to next", async () => {
    provider.state.user = { sub: "person-1", email: "pat@acme.test", name: "Pat Person" };
    const before = await mark();
    const { callback, cookie } = await signIn("/orgs/x/members?tab=1");
    const request = provider.state.authorizeRequests.at(-1)!;
    expect(request.get("redirect_uri")).toBe("http://platform.test/sign-in/oidc/callback");
    expect(request.get("code_challenge_method")).toBe("S256");
    expect(callback.pathname).toBe("/sign-in/oidc/callback");

    const done = await h.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie } });
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toBe("/orgs/x/members?tab=1");
    const cookies = done.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith("agentplane_session=aps_"));
    expect(session).toMatch(/HttpOnly; SameSite=Lax/);
    const secret = session!.split(";")[0]!.split("=")[1]!;
    const resolved = await json<{ principal: { type: string; id: string; displayName?: string } }>(
      await h.internal("POST", internalResolveSessionRoute.path, { secret }),
    );
    expect(resolved.principal).toMatchObject({ type: "user", displayName: "Pat Person" });
    const sessions = await json<{ items: { id: string; via: string }[] }>(
      await h.call("GET", "/v1/auth/sessions", { as: resolved.principal as never }),
    );
    expect(sessions.items).toEqual([expect.objectContaining({ via: "oidc" })]);

    // In the audit trail as the person who signed in, with how, and the session it opened.
    const [signedIn, ...others] = await signInRecords(before);
    expect(others).toEqual([]);
    expect(signedIn).toMatchObject({
      action: "session.signed_in",
      source: "domain",
      outcome: "success",
      principal: { type: "user", id: resolved.principal.id, displayName: "Pat Person" },
      targetType: "session",
      targetId: sessions.items[0]!.id,
      details: { method: "oidc", issuer: provider.url, userId: resolved.principal.id },
    });

    // The same person signing in again is the same user.
    const again = await signIn("/");
    const second = await h.call("GET", `${again.callback.pathname}${again.callback.search}`, {
      headers: { cookie: again.cookie },
    });
    expect(second.headers.get("location")).toBe("/");
    const secret2 = second.headers
      .getSetCookie()
      .find((c) => c.startsWith("agentplane_session="))!
      .split(";")[0]!
      .split("=")[1]!;
    const resolved2 = await json<{ principal: { id: string } }>(
      await h.internal("POST", internalResolveSessionRoute.path, { secret: secret2 }),
    );
    expect(resolved2.principal.id).toBe(resolved.principal.id);
  });

  it("never returns to another site, and refuses a callback without this browser's state", async () => {
    const before = await mark();
    const { callback, cookie } = await signIn("//evil.test/steal");
    const done = await h.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie } });
    expect(done.headers.get("location")).toBe("/");

    const other = await signIn("/orgs");
    const stolen = await h.call("GET", `${other.callback.pathname}${other.callback.search}`);
    expect(stolen.status).toBe(302);
    expect(stolen.headers.get("location")).toMatch(/^\/sign-in\?error=/);
    expect(stolen.headers.getSetCookie().some((c) => c.startsWith("agentplane_session=aps_"))).toBe(false);

    provider.state.tamper = { nonce: "not-ours" };
    const tampered = await signIn("/");
    const refused = await h.call("GET", `${tampered.callback.pathname}${tampered.callback.search}`, {
      headers: { cookie: tampered.cookie },
    });
    provider.state.tamper = {};
    const reason = new URL(refused.headers.get("location")!, "http://platform.test").searchParams.get("error");
    expect(reason).toBe("not_for_this_sign_in");

    // One success, then each refusal recorded as denied, by nobody known, without the code or state.
    const records = await signInRecords(before);
    expect(records.map((r) => [r.action, r.outcome])).toEqual([
      ["session.signed_in", "success"],
      ["session.sign_in_refused", "denied"],
      ["session.sign_in_refused", "denied"],
    ]);
    const [, stolenRecord, tamperedRecord] = records;
    expect(stolenRecord).toMatchObject({
      principal: { type: "anonymous" },
      targetType: "identity_provider",
      targetId: provider.url,
      details: { method: "oidc", reason: "No sign-in was started from this browser, or it has expired." },
    });
    expect(tamperedRecord!.details).toMatchObject({ reason: expect.stringContaining("not issued for this sign-in") });
    const written = JSON.stringify(records);
    for (const url of [other.callback, tampered.callback]) {
      expect(written).not.toContain(url.searchParams.get("code")!);
      expect(written).not.toContain(url.searchParams.get("state")!);
    }
    expect(written).not.toContain(tampered.cookie.split("=")[1]!);
  });

  it("never returns to another site through characters a browser drops from a Location", async () => {
    // A browser's URL parser removes tabs and newlines and reads `\\` as `/`: each of these
    // would become `//evil.test/…`, another site, once the browser follows the redirect.
    for (const next of ["/\t/evil.test/steal", "/\n/evil.test/steal", "/\r/evil.test", "/\\evil.test", "/\u0000/x"]) {
      const { callback, cookie } = await signIn(next);
      const done = await h.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie } });
      expect(done.status, JSON.stringify(next)).toBe(302);
      const location = done.headers.get("location")!;
      expect(new URL(location, "http://platform.test").origin, JSON.stringify(next)).toBe("http://platform.test");
      expect(location, JSON.stringify(next)).toBe("/");
    }
  });

  it("records the identity provider's refusal by its error code alone", async () => {
    const before = await mark();
    const { cookie } = await signIn("/");
    const res = await h.call(
      "GET",
      "/sign-in/oidc/callback?error=access_denied&error_description=user%20said%20no%20secret-xyz&state=s",
      { headers: { cookie } },
    );
    expect(res.headers.get("location")).toMatch(/^\/sign-in\?error=/);
    const [refused, ...others] = await signInRecords(before);
    expect(others).toEqual([]);
    expect(refused).toMatchObject({
      action: "session.sign_in_refused",
      outcome: "denied",
      details: { method: "oidc", reason: "The identity provider answered access_denied." },
    });
    expect(JSON.stringify(refused)).not.toContain("secret-xyz");
  });
});

describe("console sign-in without an identity provider (PGlite)", () => {
  let database: Database;
  let h: Awaited<ReturnType<typeof startActivated>>;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    h = await startActivated(database);
  });
  afterAll(async () => {
    await stopTenancies();
    await database?.close();
  });

  it("sends the browser back to the token sign-in with the reason", async () => {
    const res = await h.call("GET", "/sign-in/oidc?next=/orgs");
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!, "http://platform.test");
    expect(location.pathname).toBe("/sign-in");
    expect(location.searchParams.get("next")).toBe("/orgs");
    expect(location.searchParams.get("error")).toBe("not_configured");
    expect(await json(await h.call("GET", "/v1/installation"))).toMatchObject({ oidcSignIn: false });
  });
});
