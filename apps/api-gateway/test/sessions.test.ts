import { CSRF_HEADER, SECURE_SESSION_COOKIE, SESSION_COOKIE } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

/** Browser sessions through the real gateway and tenancy: the cookie, CSRF, origin, revocation. */
describe("browser sessions", () => {
  let h: Harness;
  let orgA: string;
  let orgB: string;

  beforeAll(async () => {
    // A session is trusted for 2 s like a token: sign-out through this gateway forgets it at once.
    h = await startHarness();
    orgA = (await call(h, "POST", "/v1/orgs", { body: { name: "Alpha" } })).body.id as string;
    orgB = (await call(h, "POST", "/v1/orgs", { body: { name: "Beta" } })).body.id as string;
  });
  afterAll(() => h.close());

  async function signIn(token: string) {
    const res = await call(h, "POST", "/v1/auth/sessions", {
      token,
      headers: { origin: h.url, "user-agent": "session-test" },
    });
    expect(res.status).toBe(201);
    const setCookie = res.headers.get("set-cookie") ?? "";
    const cookie = /^([^;]+)/.exec(setCookie)![1]!;
    return { cookie, csrf: res.body.csrfToken as string, setCookie, body: res.body };
  }

  /** A request as the console makes it: the cookie, the page's origin, the CSRF token when given. */
  function asBrowser(
    s: { cookie: string; csrf?: string },
    method: string,
    path: string,
    options: { body?: unknown; origin?: string | null; site?: string } = {},
  ) {
    const headers: Record<string, string> = { cookie: s.cookie };
    if (options.origin !== null) headers.origin = options.origin ?? h.url;
    if (options.site) headers["sec-fetch-site"] = options.site;
    if (s.csrf) headers[CSRF_HEADER] = s.csrf;
    return call(h, method, path, { token: null, headers, ...(options.body ? { body: options.body } : {}) });
  }

  it("exchanges a token for an HttpOnly SameSite=Lax cookie and acts as the user", async () => {
    const s = await signIn(h.ownerToken);
    expect(s.setCookie).toMatch(new RegExp(`^${SESSION_COOKIE}=aps_`));
    expect(s.setCookie).toContain("HttpOnly");
    expect(s.setCookie).toContain("SameSite=Lax");
    expect(s.setCookie).not.toContain("Secure");
    expect(s.body.session).toMatchObject({ via: "api_token", current: true });
    const me = await asBrowser(s, "GET", "/v1/auth/me", { origin: null });
    expect(me.status).toBe(200);
    expect(me.body.type).toBe("user");
    const current = await asBrowser({ cookie: s.cookie }, "GET", "/v1/auth/session", { origin: null });
    expect(current.body.csrfToken).toBe(s.csrf);
    const listed = await asBrowser(s, "GET", "/v1/auth/sessions");
    expect((listed.body.items as { id: string; current: boolean }[]).some((x) => x.current)).toBe(true);
  });

  it("refuses a mutating request without the CSRF token, with a wrong one, or without an Origin", async () => {
    const s = await signIn(h.ownerToken);
    const body = { name: "csrf" };
    const without = await asBrowser({ cookie: s.cookie }, "POST", `/v1/orgs/${orgA}/projects`, { body });
    expect(without.status).toBe(403);
    expect(without.body.detail).toContain(CSRF_HEADER);
    const wrong = await asBrowser({ cookie: s.cookie, csrf: `${s.csrf.slice(0, -2)}xx` }, "POST", "/v1/orgs", {
      body,
    });
    expect(wrong.status).toBe(403);
    expect((await asBrowser(s, "POST", "/v1/orgs", { body, origin: null })).status).toBe(403);
    const made = await asBrowser(s, "POST", `/v1/orgs/${orgA}/projects`, { body });
    expect(made.status).toBe(201);
  });

  it("refuses the cookie from another origin, even with the CSRF token", async () => {
    const s = await signIn(h.ownerToken);
    const body = { name: "cross" };
    const foreign = await asBrowser(s, "POST", "/v1/orgs", { body, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail).toContain("own origin");
    // Reads from another site are refused too (the browser says so in Sec-Fetch-Site).
    const read = await asBrowser({ cookie: s.cookie }, "GET", "/v1/orgs", { origin: null, site: "cross-site" });
    expect(read.status).toBe(403);
  });

  it("sign-out revokes the session at once and clears the cookie", async () => {
    const s = await signIn(h.ownerToken);
    const out = await asBrowser(s, "DELETE", "/v1/auth/session");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    const after = await asBrowser(s, "GET", "/v1/auth/me", { origin: null });
    expect(after.status).toBe(401);
  });

  it("a session of a viewer-role token cannot mutate (403) and ends when the token is revoked", async () => {
    const minted = await call(h, "POST", `/v1/orgs/${orgA}/api-tokens`, { body: { name: "viewer", role: "viewer" } });
    expect(minted.status).toBe(201);
    const s = await signIn(minted.body.token as string);
    expect((await asBrowser(s, "GET", `/v1/orgs/${orgA}/projects`)).status).toBe(200);
    const denied = await asBrowser(s, "POST", `/v1/orgs/${orgA}/projects`, { body: { name: "no" } });
    expect(denied.status).toBe(403);
    expect((await call(h, "DELETE", `/v1/api-tokens/${minted.body.id}`)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 2100));
    expect((await asBrowser(s, "GET", `/v1/orgs/${orgA}/projects`)).status).toBe(401);
  });

  it("a session bound to one organization sees another's pages as 404", async () => {
    const minted = await call(h, "POST", `/v1/orgs/${orgA}/api-tokens`, { body: { name: "alpha only" } });
    const s = await signIn(minted.body.token as string);
    expect((await asBrowser(s, "GET", `/v1/orgs/${orgA}`)).status).toBe(200);
    expect((await asBrowser(s, "GET", `/v1/orgs/${orgB}`)).status).toBe(404);
    expect((await asBrowser(s, "GET", `/v1/orgs/${orgB}/projects`)).status).toBe(404);
  });

  it("answers 401 to a forged or unknown session cookie", async () => {
    const forged = { cookie: `${SESSION_COOKIE}=aps_${"0".repeat(26)}_${"a".repeat(43)}` };
    expect((await asBrowser(forged, "GET", "/v1/auth/me", { origin: null })).status).toBe(401);
  });
});

/**
 * Published at https, the cookie is `__Host-…`: a page on a sibling subdomain (a sandbox's port
 * behind the ingress) can set `agentplane_session` for the parent domain, never a `__Host-` one.
 */
describe("browser sessions at an https address", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ publicUrl: "https://console.example.test" });
  });
  afterAll(() => h.close());

  it("names the cookie __Host-, Secure, and takes no session from a cookie another host could set", async () => {
    const res = await call(h, "POST", "/v1/auth/sessions", {
      token: h.ownerToken,
      headers: { origin: "https://console.example.test" },
    });
    expect(res.status).toBe(201);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(new RegExp(`^${SECURE_SESSION_COOKIE}=aps_.*; Path=/; HttpOnly; SameSite=Lax; .*Secure`));
    expect(setCookie).not.toContain("Domain=");
    const secret = /^[^=]+=([^;]+)/.exec(setCookie)![1]!;
    const me = (cookie: string) => call(h, "GET", "/v1/auth/me", { token: null, headers: { cookie } });
    expect((await me(`${SECURE_SESSION_COOKIE}=${secret}`)).status).toBe(200);
    // The same secret under the name a sibling subdomain can set is no session here.
    expect((await me(`${SESSION_COOKIE}=${secret}`)).status).toBe(401);
    // Planted beside the real one, it changes nothing.
    const both = await me(`${SESSION_COOKIE}=aps_planted; ${SECURE_SESSION_COOKIE}=${secret}`);
    expect(both.status).toBe(200);
  });
});
