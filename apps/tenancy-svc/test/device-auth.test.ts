import { AUDIT_RECORDED, type AuditRecorded, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  addMember,
  BOOTSTRAP_TOKEN,
  type Harness,
  json,
  startActivated,
  startTenancy,
  stopTenancies,
} from "./fixtures/harness.ts";

interface Started {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

const ORIGIN = "http://platform.test";

function start(h: Harness, clientName = "agentplane CLI on build-7"): Promise<Started> {
  return h.call("POST", "/v1/auth/device", { body: { clientName } }).then((r) => {
    expect(r.status).toBe(201);
    return json<Started>(r);
  });
}

async function poll(h: Harness, deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await h.call("POST", "/v1/auth/device/token", { body: { deviceCode } });
  return { status: res.status, body: await json(res) };
}

function submit(h: Harness, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return h.call("POST", "/device", {
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, ...headers },
  });
}

/** A browser session of `who`: its cookie and CSRF token, opened through the real endpoint. */
async function browserSession(h: Harness, who: Principal): Promise<{ cookie: string; csrfToken: string }> {
  const res = await h.call("POST", "/v1/auth/sessions", { as: who });
  expect(res.status).toBe(201);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  return { cookie, csrfToken: (await json<{ csrfToken: string }>(res)).csrfToken };
}

/** Moves the clock forward (Date only: the database and timers are untouched). */
function later(ms: number): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + ms);
}

describe("sign-in device flow (RFC 8628) and its approval page (PGlite)", () => {
  let database: Database;
  beforeEach(async () => {
    database = await openDatabase("pglite://memory");
  });
  afterEach(async () => {
    vi.useRealTimers();
    await stopTenancies();
    await database.close();
  });

  it("is refused with 409 before the installation is activated", async () => {
    const h = await startTenancy(database);
    const res = await h.call("POST", "/v1/auth/device", { body: {} });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });

  it("pending, slow_down (the interval grows for good), approval with a pasted token, the token once", async () => {
    const h = await startActivated(database, { activationIntervalSeconds: 1 });
    const started = await start(h);
    expect(started.userCode).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    expect(started.deviceCode.length).toBeGreaterThanOrEqual(43);
    expect(started).toMatchObject({
      verificationUri: `${ORIGIN}/device`,
      verificationUriComplete: `${ORIGIN}/device?code=${started.userCode}`,
      expiresIn: 600,
      interval: 1,
    });
    // Neither code is stored as such.
    const rows = await database.kysely.withSchema("tenancy").selectFrom("device_authorizations").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(started.deviceCode);
    expect(JSON.stringify(rows)).not.toContain(started.userCode);

    const first = await poll(h, started.deviceCode);
    expect(first).toMatchObject({ status: 400, body: { error: "authorization_pending" } });
    // Sooner than the interval: slow down, and the interval is five seconds longer from now on.
    expect(await poll(h, started.deviceCode)).toMatchObject({ status: 400, body: { error: "slow_down", interval: 6 } });
    later(2000);
    expect((await poll(h, started.deviceCode)).body).toMatchObject({ error: "slow_down", interval: 11 });
    later(11_500);
    expect((await poll(h, started.deviceCode)).body).toMatchObject({ error: "authorization_pending", interval: 11 });
    vi.useRealTimers();

    const page = await h.call("GET", `/device?code=${started.userCode.toLowerCase()}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("agentplane CLI on build-7");
    expect(html).toContain('name="token"');
    expect(html).toContain("Sign in to decide");

    const bad = await submit(h, { userCode: started.userCode, decision: "approve", token: "apl_not_a_token" });
    expect(bad.status).toBe(401);
    const ok = await submit(h, { userCode: started.userCode, decision: "approve", token: BOOTSTRAP_TOKEN });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Sign-in approved");

    const approved = await poll(h, started.deviceCode);
    expect(approved.status).toBe(200);
    expect(approved.body.token).toMatch(/^apl_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    const expiresIn = new Date(String(approved.body.expiresAt)).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(29.9 * 86_400_000);
    expect(expiresIn).toBeLessThanOrEqual(30 * 86_400_000);
    const principal = await h.principalOf(approved.body.token as string);
    expect(principal).toMatchObject({ type: "api_token", userId: h.owner.userId, role: "owner" });
    expect(principal.displayName).toBe("agentplane CLI on build-7");

    // Handed out once; the page will not decide it again.
    expect((await poll(h, started.deviceCode)).body).toMatchObject({ error: "invalid_grant" });
    expect((await submit(h, { userCode: started.userCode, decision: "deny", token: BOOTSTRAP_TOKEN })).status).toBe(
      409,
    );
    expect((await poll(h, "no-such-device-code")).body).toMatchObject({ error: "invalid_grant" });

    const events: AuditRecorded[] = [];
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
      events.push(e.data);
    });
    await h.settle();
    const created = events.find((e) => e.action === "api_token.created" && e.targetId === approved.body.tokenId);
    expect(created).toBeDefined();
    expect(created!.details).toMatchObject({ via: "device_authorization", role: "owner" });
  });

  it("a browser session approves and denies with its CSRF token; a foreign origin or no token is refused", async () => {
    const h = await startActivated(database, { activationIntervalSeconds: 1 });
    const viewer = await addMember(h, h.owner, h.orgId, "viewer@acme.test", "viewer");
    const { cookie, csrfToken } = await browserSession(h, viewer);

    const started = await start(h);
    const page = await h.call("GET", `/device?code=${started.userCode}`, { headers: { cookie } });
    const html = await page.text();
    expect(html).toContain("Signed in as viewer@acme.test");
    expect(html).toContain(`value="${csrfToken}"`);
    expect(html).not.toContain('name="token"');

    const fields = { userCode: started.userCode, decision: "approve" };
    expect((await submit(h, fields, { cookie })).status).toBe(403);
    expect((await submit(h, { ...fields, csrfToken: "forged" }, { cookie })).status).toBe(403);
    expect((await submit(h, { ...fields, csrfToken }, { cookie, origin: "https://evil.test" })).status).toBe(403);
    expect((await submit(h, { ...fields, csrfToken })).status).toBe(401);
    const ok = await submit(h, { ...fields, csrfToken }, { cookie });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("viewer role");

    // A viewer gets a viewer token, whatever the client wished for.
    const approved = await poll(h, started.deviceCode);
    expect(approved.status).toBe(200);
    expect(await h.principalOf(approved.body.token as string)).toMatchObject({ userId: viewer.id, role: "viewer" });

    const denied = await start(h);
    const no = await submit(h, { userCode: denied.userCode, decision: "deny", csrfToken }, { cookie });
    expect(no.status).toBe(200);
    expect(await no.text()).toContain("Sign-in denied");
    expect(await poll(h, denied.deviceCode)).toMatchObject({ status: 400, body: { error: "access_denied" } });
  });

  it("does not put a code from another site's link one click from approval", async () => {
    // Whoever sends a link to /device?code=… chose the code: their own flow's, for the token the
    // click would hand them. Opened from another site, the page asks for the code to be typed.
    const h = await startActivated(database);
    const { cookie } = await browserSession(h, h.owner);
    const started = await start(h);
    for (const site of ["cross-site", "same-site"]) {
      const page = await h.call("GET", `/device?code=${started.userCode}`, {
        headers: { cookie, "sec-fetch-site": site },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).not.toContain('value="approve"');
      expect(html).not.toContain(started.userCode);
      expect(html).toContain("Type the code your device shows");
    }
    // Opened by the device's own client, typed, or sent on from this page: as before.
    for (const site of ["none", "same-origin", undefined]) {
      const headers: Record<string, string> = { cookie, ...(site ? { "sec-fetch-site": site } : {}) };
      const html = await (await h.call("GET", `/device?code=${started.userCode}`, { headers })).text();
      expect(html, site).toContain('value="approve"');
    }
  });

  it("an approved code not collected before it expires hands out nothing, and its token is revoked", async () => {
    const h = await startActivated(database, { activationTtlSeconds: 2 });
    const started = await start(h);
    const ok = await submit(h, { userCode: started.userCode, decision: "approve", token: BOOTSTRAP_TOKEN });
    expect(ok.status).toBe(200);
    const minted = await database.kysely
      .withSchema("tenancy")
      .selectFrom("device_authorizations")
      .select(["token_id", "token_enc"])
      .executeTakeFirstOrThrow();
    expect(minted.token_enc).not.toBeNull();
    later(2100);
    for (let i = 0; i < 2; i++) {
      expect(await poll(h, started.deviceCode)).toMatchObject({ status: 400, body: { error: "expired_token" } });
    }
    const after = await database.kysely
      .withSchema("tenancy")
      .selectFrom("device_authorizations")
      .select("token_enc")
      .executeTakeFirstOrThrow();
    expect(after.token_enc).toBeNull();
    const token = await database.kysely
      .withSchema("tenancy")
      .selectFrom("api_tokens")
      .select("revoked_at")
      .where("id", "=", minted.token_id as string)
      .executeTakeFirstOrThrow();
    expect(token.revoked_at).not.toBeNull();
  });

  it("expires both codes", async () => {
    const h = await startActivated(database, { activationTtlSeconds: 1 });
    const started = await start(h);
    later(1100);
    expect(await poll(h, started.deviceCode)).toMatchObject({ status: 400, body: { error: "expired_token" } });
    const page = await h.call("GET", `/device?code=${started.userCode}`);
    expect(await page.text()).toContain("Code expired");
    const late = await submit(h, { userCode: started.userCode, decision: "approve", token: BOOTSTRAP_TOKEN });
    expect(late.status).toBe(410);
  });

  it("refuses a client name that would reorder or hide the approval page's words", async () => {
    const h = await startActivated(database);
    // Unauthenticated and chosen by whoever starts the flow: shown on the approval page, then the
    // new token's name. U+202E would make "asks to sign in as you" read backwards after it.
    for (const clientName of ["agentplane CLI\u202e", "CLI\u2066 on build-7", "CLI\u0007"]) {
      const res = await h.call("POST", "/v1/auth/device", { body: { clientName } });
      expect(res.status, JSON.stringify(clientName)).toBe(400);
    }
    expect((await h.call("POST", "/v1/auth/device", { body: { clientName: "CLI on café-7" } })).status).toBe(201);
  });
});
