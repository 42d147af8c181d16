import { type Database, openDatabase } from "@agentplane/db";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startActivated, stopTenancies } from "./fixtures/harness.ts";

const CLIENT_ID = "agentplane-console";
const CLIENT_SECRET = "console-secret";
const HTTPS = { "x-forwarded-proto": "https" };

/**
 * Over https the console sign-in's state cookie is a `__Host-` cookie, as the session's is: a page
 * of a sibling host (a sandbox's exposed port under the same domain) can plant a plain cookie for
 * the parent domain, and with a planted state cookie and the matching callback URL, the browser of
 * whoever follows the link would be signed in as the planter.
 */
describe("the console sign-in's state cookie over https (PGlite, local identity provider)", () => {
  let database: Database;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let h: Awaited<ReturnType<typeof startActivated>>;

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    database = await openDatabase("pglite://memory");
    h = await startActivated(database, {
      oidc: { issuer: provider.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    });
  });
  afterAll(async () => {
    await stopTenancies();
    await database?.close();
    await provider?.close();
  });

  /** A sign-in started and carried through the provider up to (not into) the callback. */
  async function startedAs(sub: string) {
    provider.state.user = { sub, email: `${sub}@acme.test`, name: sub };
    const start = await h.call("GET", "/sign-in/oidc?next=%2F", { headers: HTTPS });
    expect(start.status).toBe(302);
    const setCookie = start.headers.get("set-cookie") ?? "";
    const value = /^[^=]+=([^;]+)/.exec(setCookie)![1]!;
    const back = await fetch(new URL(start.headers.get("location")!), { redirect: "manual" });
    const callback = new URL(back.headers.get("location")!);
    return { setCookie, value, callback: `${callback.pathname}${callback.search}` };
  }

  const sessionSet = (res: Response) => res.headers.getSetCookie().some((c) => /_session=aps_/.test(c));

  it("is named __Host-, Secure, for the whole origin", async () => {
    const { setCookie } = await startedAs("alice");
    expect(setCookie).toMatch(/^__Host-agentplane_sign_in=/);
    expect(setCookie).toMatch(/Path=\/;/);
    expect(setCookie).toMatch(/Secure/);
    expect(setCookie).not.toMatch(/Domain=/i);
  });

  it("takes no state from a plain cookie another host could set", async () => {
    const planted = await startedAs("mallory");
    const done = await h.call("GET", planted.callback, {
      headers: { ...HTTPS, cookie: `agentplane_sign_in=${planted.value}` },
    });
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toMatch(/^\/sign-in\?error=/);
    expect(sessionSet(done)).toBe(false);
  });

  it("signs in with its own __Host- cookie", async () => {
    const own = await startedAs("alice");
    const done = await h.call("GET", own.callback, {
      headers: { ...HTTPS, cookie: `__Host-agentplane_sign_in=${own.value}` },
    });
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toBe("/");
    expect(sessionSet(done)).toBe(true);
    // The state cookie is cleared under the name and path it was set with.
    expect(done.headers.getSetCookie().join("\n")).toMatch(/__Host-agentplane_sign_in=;.*Max-Age=0.*Path=\//);
  });
});
