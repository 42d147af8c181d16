// A resolved API token or browser session is kept briefly so that tenancy is not asked on every
// request; its own expiry still ends it on time, however long the gateway would otherwise keep it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

describe("an API token that expires while the gateway keeps it", () => {
  let h: Harness;
  beforeAll(async () => {
    // Kept far longer than the token lives, so only its expiry can end it.
    h = await startHarness({ opaqueTtlMs: 60_000 });
  });
  afterAll(() => h.close());

  /** A token of the owner's organization that expires in 1.5 s. */
  async function shortToken(name: string) {
    const me = await call(h, "GET", "/v1/auth/me");
    const orgId = (me.body.organizations as { id: string }[])[0]!.id;
    const expiresAt = new Date(Date.now() + 1500);
    const created = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, {
      body: { name, expiresAt: expiresAt.toISOString() },
    });
    expect(created.status).toBe(201);
    const untilExpiry = () => new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 20));
    return { orgId, token: created.body.token as string, untilExpiry };
  }

  it("is refused from its expiry on", async () => {
    const { orgId, token, untilExpiry } = await shortToken("short");
    expect((await call(h, "GET", `/v1/orgs/${orgId}`, { token })).status).toBe(200);
    await untilExpiry();
    const late = await call(h, "GET", `/v1/orgs/${orgId}`, { token });
    expect(late.status).toBe(401);
  });

  it("ends a session opened with a token when the token expires, not when the gateway forgets it", async () => {
    const { orgId, token, untilExpiry } = await shortToken("short-session");
    const opened = await call(h, "POST", "/v1/auth/sessions", {
      token,
      headers: { origin: h.url },
    });
    expect(opened.status).toBe(201);
    const cookie = /^([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!;
    const asBrowser = () => call(h, "GET", `/v1/orgs/${orgId}`, { token: null, headers: { cookie } });
    expect((await asBrowser()).status).toBe(200);
    await untilExpiry();
    const late = await asBrowser();
    expect(late.status).toBe(401);
    expect(String(late.body.detail)).toContain("sign in again");
  });
});
