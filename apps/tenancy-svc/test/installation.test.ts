import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BOOTSTRAP_TOKEN, type Harness, json, startTenancy, stopTenancies } from "./fixtures/harness.ts";

interface Session {
  sessionId: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

function approve(h: Harness, fields: Record<string, string>): Promise<Response> {
  return h.call("POST", "/activate", {
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

describe("installation and device-flow activation (PGlite)", () => {
  let database: Database;
  beforeEach(async () => {
    database = await openDatabase("pglite://memory");
  });
  afterEach(async () => {
    await stopTenancies();
    await database.close();
  });

  it("starts unactivated with a setup code, and reports its status without authentication", async () => {
    const h = await startTenancy(database);
    expect(h.service.activated).toBe(false);
    expect(h.service.setupCode).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    const res = await h.call("GET", "/v1/installation");
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ status: "unactivated", installationId: h.service.installationId });
    expect(typeof body.version).toBe("string");
  });

  it("answers the approval pages so that no other site may frame them (clickjacking)", async () => {
    const h = await startTenancy(database);
    const session = await json<Session>(await h.call("POST", "/v1/installation/activation"));
    const answers = {
      activate: await h.call("GET", `/activate?code=${session.userCode}`),
      "activate, refused": await approve(h, { userCode: session.userCode, setupCode: "AAAA-AAAA-AAAA" }),
      "activate callback": await h.call("GET", "/activate/callback?state=x&code=y"),
      device: await h.call("GET", "/device?code=BCDF-GHJK"),
      "device, refused": await h.call("POST", "/device", {
        body: "userCode=BCDF-GHJK&decision=approve",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
    };
    for (const [name, res] of Object.entries(answers)) {
      expect(res.headers.get("content-type"), name).toMatch(/^text\/html/);
      expect(res.headers.get("x-frame-options"), name).toBe("DENY");
      expect(res.headers.get("content-security-policy"), name).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy"), name).toContain("default-src 'none'");
      expect(res.headers.get("x-content-type-options"), name).toBe("nosniff");
      expect(res.headers.get("referrer-policy"), name).toBe("same-origin");
    }
  });

  it("activates end to end: slow_down, approval with the setup code, the token exactly once, 409 afterwards", async () => {
    const h = await startTenancy(database, { activationIntervalSeconds: 1 });
    const started = await h.call("POST", "/v1/installation/activation");
    expect(started.status).toBe(201);
    const session = await json<Session>(started);
    expect(session.userCode).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    expect(session.verificationUri).toBe("http://platform.test/activate");
    expect(session.verificationUriComplete).toBe(`http://platform.test/activate?code=${session.userCode}`);
    expect(session).toMatchObject({ expiresIn: 600, interval: 1 });

    const poll = () => h.call("GET", `/v1/installation/activation/${session.sessionId}`).then((r) => json(r));
    expect(await poll()).toMatchObject({ status: "pending" });
    expect(await poll()).toMatchObject({ status: "slow_down", interval: 1 });

    const page = await h.call("GET", `/activate?code=${session.userCode}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`value="${session.userCode}"`);
    // Followed from another site's link, the code is typed, not filled in: the link chose it.
    const linked = await h.call("GET", `/activate?code=${session.userCode}`, {
      headers: { "sec-fetch-site": "cross-site" },
    });
    const linkedHtml = await linked.text();
    expect(linkedHtml).not.toContain(session.userCode);
    expect(linkedHtml).toContain("Type the code your device shows");

    const wrong = await approve(h, { userCode: session.userCode, setupCode: "AAAA-AAAA-AAAA" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("4 attempt(s) left");

    const ok = await approve(h, {
      userCode: session.userCode.toLowerCase().replace("-", ""),
      setupCode: h.service.setupCode!,
      orgName: "Acme",
      email: "owner@acme.test",
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Installation activated");

    // An approved session answers at once, however soon after the last poll.
    const approved = await poll();
    expect(approved).toMatchObject({ status: "approved" });
    expect(approved.token).toMatch(/^apl_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    const again = await poll();
    expect(again.status).toBe("approved");
    expect(again.token).toBeUndefined();

    const owner = await h.principalOf(approved.token as string);
    const me = await json(await h.call("GET", "/v1/auth/me", { as: owner }));
    expect(me).toMatchObject({
      type: "api_token",
      email: "owner@acme.test",
      organizations: [{ name: "Acme", role: "owner" }],
    });

    expect(await json(await h.call("GET", "/v1/installation"))).toMatchObject({ status: "activated" });
    const late = await h.call("POST", "/v1/installation/activation");
    expect(late.status).toBe(409);
    expect(late.headers.get("content-type")).toContain("application/problem+json");

    await h.settle();
    const events: AuditRecorded[] = [];
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
      events.push(e.data);
    });
    await h.settle();
    expect(events.map((e) => e.action)).toContain("installation.activated");
  });

  it("expires sessions and denies after five wrong setup codes", async () => {
    const h = await startTenancy(database, { activationTtlSeconds: 1 });
    const short = await json<Session>(await h.call("POST", "/v1/installation/activation"));
    // Past the one-second lifetime on a clock moved forward, not by waiting.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 1100);
      expect(await json(await h.call("GET", `/v1/installation/activation/${short.sessionId}`))).toMatchObject({
        status: "expired",
      });
      expect((await approve(h, { userCode: short.userCode, setupCode: h.service.setupCode! })).status).toBe(410);
    } finally {
      vi.useRealTimers();
    }

    const h2 = await startTenancy(database, { activationTtlSeconds: 600 });
    // A restart while unactivated replaces the setup code: the old one no longer works.
    expect(h2.service.setupCode).not.toBe(h.service.setupCode);
    const session = await json<Session>(await h2.call("POST", "/v1/installation/activation"));
    for (let i = 0; i < 4; i++) {
      expect((await approve(h2, { userCode: session.userCode, setupCode: h.service.setupCode! })).status).toBe(400);
    }
    expect((await approve(h2, { userCode: session.userCode, setupCode: "WRONG-CODE" })).status).toBe(403);
    // Denied for good, even with the right code now.
    expect((await approve(h2, { userCode: session.userCode, setupCode: h2.service.setupCode! })).status).toBe(403);
    expect(await json(await h2.call("GET", `/v1/installation/activation/${session.sessionId}`))).toMatchObject({
      status: "denied",
    });
    expect(await json(await h2.call("GET", "/v1/installation"))).toMatchObject({ status: "unactivated" });
    expect((await h2.call("GET", "/v1/installation/activation/act_unknown")).status).toBe(404);
  });

  it("activates at first start with the bootstrap token and accepts exactly that string", async () => {
    const h = await startTenancy(database, { bootstrapToken: BOOTSTRAP_TOKEN });
    expect(h.service.activated).toBe(true);
    expect(h.service.setupCode).toBeUndefined();
    const owner = await h.principalOf(BOOTSTRAP_TOKEN);
    expect(owner).toMatchObject({ type: "api_token", role: "owner" });
    const me = await json(await h.call("GET", "/v1/auth/me", { as: owner }));
    expect(me).toMatchObject({ organizations: [{ name: "Default", role: "owner" }] });
    const near = await h.internal("POST", "/internal/authn/api-token", { token: `${BOOTSTRAP_TOKEN}x` });
    expect(near.status).toBe(401);
    // A restart keeps the activation and the token.
    const restarted = await startTenancy(database, { bootstrapToken: BOOTSTRAP_TOKEN });
    expect(restarted.service.activated).toBe(true);
    expect(restarted.service.installationId).toBe(h.service.installationId);
    expect((await restarted.principalOf(BOOTSTRAP_TOKEN)).id).toBe(owner.id);
    expect((await restarted.call("POST", "/v1/installation/activation")).status).toBe(409);
  });

  it("rejects a bootstrap token shorter than 32 characters", async () => {
    await expect(startTenancy(database, { bootstrapToken: "short" })).rejects.toThrow(/at least 32/);
  });
});
