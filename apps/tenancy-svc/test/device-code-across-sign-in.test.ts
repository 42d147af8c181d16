import { internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const CLIENT_ID = "agentplane-console";
const CLIENT_SECRET = "console-secret";

/**
 * A person types their device's code at `/device`, is not signed in, signs in with the identity
 * provider and comes back: the redirects arrive from another site, whose `?code=` the page never
 * takes, so the code they typed is kept by the page itself (a cookie it sets only answering its
 * own origin's form) and shown again for them to approve.
 */
describe("the code typed at /device survives the sign-in it needs (PGlite, local identity provider)", () => {
  let database: Database;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let h: Awaited<ReturnType<typeof startActivated>>;

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    provider.state.user = { sub: "device-person", email: "dee@device.test", emailVerified: true, name: "Dee" };
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

  const startFlow = async (harness: Harness) => {
    const res = await harness.call("POST", "/v1/auth/device", { body: { clientName: "build-7" } });
    expect(res.status).toBe(201);
    return json<{ deviceCode: string; userCode: string }>(res);
  };
  const cookiePair = (setCookie: string) => setCookie.split(";")[0]!;

  /** The browser's round trip through the identity provider; the session cookie it ends with. */
  async function signIn(next: string): Promise<string> {
    const begin = await h.call("GET", `/sign-in/oidc?next=${encodeURIComponent(next)}`);
    expect(begin.status).toBe(302);
    const state = cookiePair(begin.headers.get("set-cookie")!);
    const back = await fetch(new URL(begin.headers.get("location")!), { redirect: "manual" });
    const callback = new URL(back.headers.get("location")!);
    const done = await h.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie: state } });
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toBe("/device");
    return cookiePair(done.headers.getSetCookie().find((c) => c.startsWith("agentplane_session="))!);
  }

  it("shows the typed code after signing in, for approval, and forgets it once decided", async () => {
    // The person signs in through the identity provider once before, and joins the organization.
    const first = await signIn("/device");
    const resolved = await h.internal("POST", internalResolveSessionRoute.path, { secret: first.split("=")[1] });
    const dee = (await json<{ principal: Principal }>(resolved)).principal;
    const invited = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
      as: h.owner,
      body: { email: "dee@device.test", role: "member" },
    });
    const { id } = await json<{ id: string }>(invited);
    expect((await h.call("POST", `/v1/invitations/${id}/accept`, { as: dee })).status).toBe(200);

    const flow = await startFlow(h);
    // Typed into the page's form: a request from the page's own origin, without a session.
    const typed = await h.call("GET", `/device?code=${flow.userCode}`, {
      headers: { "sec-fetch-site": "same-origin" },
    });
    expect(typed.status).toBe(200);
    expect(await typed.text()).toContain("Sign in to decide");
    const kept = typed.headers.getSetCookie().find((c) => c.startsWith("agentplane_device_code="));
    expect(kept).toMatch(/HttpOnly/);
    expect(kept).toMatch(/SameSite=Lax/);
    expect(kept).toMatch(/Path=\/device/);

    const session = await signIn("/device");
    // Back from the identity provider: a cross-site arrival, with no code in the address.
    const cookie = `${session}; ${cookiePair(kept!)}`;
    const back = await h.call("GET", "/device", { headers: { cookie, "sec-fetch-site": "cross-site" } });
    expect(back.status).toBe(200);
    const html = await back.text();
    expect(html).toContain(flow.userCode);
    expect(html).toContain('value="approve"');
    expect(html).toContain("Signed in as Dee");
    const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(html)![1]!;

    const approved = await h.call("POST", "/device", {
      body: new URLSearchParams({ userCode: flow.userCode, decision: "approve", csrfToken }).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://platform.test",
        "sec-fetch-site": "same-origin",
        cookie,
      },
    });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("Sign-in approved");
    expect(approved.headers.getSetCookie().find((c) => c.startsWith("agentplane_device_code="))).toMatch(/Max-Age=0/);
    const poll = await h.call("POST", "/v1/auth/device/token", { body: { deviceCode: flow.deviceCode } });
    expect(poll.status).toBe(200);

    // Decided, the kept code no longer fills the page (a browser that kept the cookie anyway).
    const again = await h.call("GET", "/device", { headers: { cookie, "sec-fetch-site": "same-origin" } });
    const form = await again.text();
    expect(form).not.toContain(flow.userCode);
    expect(form).not.toContain('value="approve"');
  });

  it("keeps nothing from a link: a code in another site's or an outside address is not carried", async () => {
    const flow = await startFlow(h);
    for (const site of ["cross-site", "same-site", "none", undefined]) {
      const headers: Record<string, string> = site ? { "sec-fetch-site": site } : {};
      const opened = await h.call("GET", `/device?code=${flow.userCode}`, { headers });
      expect(opened.status, site).toBe(200);
      expect(
        opened.headers.getSetCookie().filter((c) => c.startsWith("agentplane_device_code=")),
        site,
      ).toEqual([]);
    }
    // After the sign-in that link led to, the page asks for the code: the empty form.
    const session = await signIn("/device");
    const back = await h.call("GET", "/device", { headers: { cookie: session, "sec-fetch-site": "cross-site" } });
    const html = await back.text();
    expect(html).not.toContain(flow.userCode);
    expect(html).not.toContain('value="approve"');
    expect(html).toContain('<input id="code" name="code" value=""');
  });

  it("keeps the code the CLI's address showed once the person asks, on the page, to sign in", async () => {
    const flow = await startFlow(h);
    // Opened by the CLI (the address bar: `none`), signed out: shown, but not kept from the address.
    const opened = await h.call("GET", `/device?code=${flow.userCode}`, { headers: { "sec-fetch-site": "none" } });
    expect(opened.status).toBe(200);
    expect(opened.headers.getSetCookie().filter((c) => c.startsWith("agentplane_device_code="))).toEqual([]);
    const shown = await opened.text();
    expect(shown).toContain("Check that it shows the code");
    // Signing in is a form of the page's own, which sends the shown code back to it.
    const form =
      /<form method="post" action="\/device">((?:(?!<\/form>)[\s\S])*Sign in to decide[\s\S]*?)<\/form>/.exec(shown);
    expect(form).not.toBeNull();
    const fields = Object.fromEntries(
      [...form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    expect(fields.userCode).toBe(flow.userCode);
    const post = (site: string | undefined, body = fields) =>
      h.call("POST", "/device", {
        body: new URLSearchParams(body).toString(),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: "http://platform.test",
          ...(site ? { "sec-fetch-site": site } : {}),
        },
      });
    const keptFrom = (res: Response) =>
      res.headers.getSetCookie().filter((c) => c.startsWith("agentplane_device_code="));

    // Not from the page itself (another site's form, an outside request): nothing is kept.
    const crossSite = await post("cross-site");
    expect(crossSite.status).toBe(403);
    expect(keptFrom(crossSite)).toEqual([]);
    for (const site of ["none", "same-site", undefined]) {
      const res = await post(site);
      expect(keptFrom(res), site).toEqual([]);
    }

    // From the page itself: kept as a typed code is, and on to the sign-in.
    const asked = await post("same-origin");
    expect(asked.status).toBe(303);
    expect(asked.headers.get("location")).toBe(`/sign-in?next=${encodeURIComponent("/device")}`);
    const kept = keptFrom(asked);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/HttpOnly/);
    expect(kept[0]).toMatch(/SameSite=Lax/);
    expect(kept[0]).toMatch(/Path=\/device/);

    const session = await signIn("/device");
    const back = await h.call("GET", "/device", {
      headers: { cookie: `${session}; ${cookiePair(kept[0]!)}`, "sec-fetch-site": "cross-site" },
    });
    expect(back.status).toBe(200);
    const html = await back.text();
    expect(html).toContain("build-7");
    expect(html).toContain(`<strong id="user-code">${flow.userCode}</strong>`);
    expect(html).toContain("Check that it shows the code");
    expect(html).toContain("Signed in as Dee");
    expect(html).toMatch(/name="csrfToken" value="[^"]+"/);
    expect(html).toContain('value="approve"');
    expect(html).toContain('value="deny"');

    // Nor is a code kept that is not waiting, or not a code.
    for (const userCode of ["ZZZZ-ZZZZ", "a;b=c", ""]) {
      const res = await post("same-origin", { ...fields, userCode });
      expect(keptFrom(res), userCode).toEqual([]);
    }
  });

  it("keeps the code under __Host- over https", async () => {
    const flow = await startFlow(h);
    const typed = await h.call("GET", `/device?code=${flow.userCode}`, {
      headers: { "sec-fetch-site": "same-origin", "x-forwarded-proto": "https" },
    });
    const kept = typed.headers.getSetCookie().find((c) => c.includes("agentplane_device_code="));
    expect(kept).toMatch(/^__Host-agentplane_device_code=/);
    expect(kept).toMatch(/Path=\/;/);
    expect(kept).toMatch(/Secure/);
    // So does the page's sign-in form.
    const asked = await h.call("POST", "/device", {
      body: new URLSearchParams({ userCode: flow.userCode, step: "sign-in" }).toString(),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://platform.test",
        "sec-fetch-site": "same-origin",
        "x-forwarded-proto": "https",
      },
    });
    expect(asked.status).toBe(303);
    const keptAgain = asked.headers.getSetCookie().find((c) => c.includes("agentplane_device_code="));
    expect(keptAgain).toMatch(/^__Host-agentplane_device_code=/);
    expect(keptAgain).toMatch(/Path=\/;/);
    expect(keptAgain).toMatch(/Secure/);
  });
});
