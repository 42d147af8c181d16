import { CSRF_HEADER } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

/**
 * Resolved tokens and sessions are trusted for a while (here a minute, to make the window plain):
 * what is revoked through this gateway stops working with the very next request, not a minute later.
 */
describe("revocation through the gateway takes effect at once", () => {
  let h: Harness;
  let orgId: string;

  beforeAll(async () => {
    h = await startHarness({ opaqueTtlMs: 60_000 });
    orgId = (await call(h, "POST", "/v1/orgs", { body: { name: "Revocations" } })).body.id as string;
  });
  afterAll(() => h.close());

  async function token(body: Record<string, unknown> = {}, as = h.ownerToken) {
    const res = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, { token: as, body: { name: "t", ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; token: string };
  }

  const readOrg = (t: string) => call(h, "GET", `/v1/orgs/${orgId}`, { token: t });

  it("refuses a token revoked by its owner, and one that revoked itself", async () => {
    const revoked = await token();
    expect((await readOrg(revoked.token)).status).toBe(200);
    expect((await call(h, "DELETE", `/v1/api-tokens/${revoked.id}`)).status).toBe(204);
    const after = await readOrg(revoked.token);
    expect(after.status).toBe(401);
    expect(after.headers.get("content-type")).toContain("application/problem+json");

    const own = await token();
    expect((await readOrg(own.token)).status).toBe(200);
    expect((await call(h, "DELETE", `/v1/api-tokens/${own.id}`, { token: own.token })).status).toBe(204);
    expect((await readOrg(own.token)).status).toBe(401);
  });

  it("refuses a session revoked from another one", async () => {
    const opened = await call(h, "POST", "/v1/auth/sessions", { headers: { origin: h.url } });
    expect(opened.status).toBe(201);
    const cookie = /^([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!;
    const me = () => call(h, "GET", "/v1/auth/me", { token: null, headers: { cookie } });
    expect((await me()).status).toBe(200);
    const sessionId = (opened.body.session as { id: string }).id;
    expect((await call(h, "DELETE", `/v1/auth/sessions/${sessionId}`)).status).toBe(204);
    expect((await me()).status).toBe(401);
  });

  /** Opens a session with the owner's token, or from the session `from` (its cookie and CSRF token). */
  async function openSession(from?: { cookie: string; csrfToken: string }) {
    const opened = await call(h, "POST", "/v1/auth/sessions", {
      ...(from ? { token: null } : {}),
      headers: { origin: h.url, ...(from ? { cookie: from.cookie, [CSRF_HEADER]: from.csrfToken } : {}) },
    });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    return {
      id: (opened.body.session as { id: string }).id,
      cookie: /^([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!,
      csrfToken: opened.body.csrfToken as string,
    };
  }
  const meWith = (s: { cookie: string }) =>
    call(h, "GET", "/v1/auth/me", { token: null, headers: { cookie: s.cookie } });

  it("refuses at once a session opened from a revoked one, though this gateway had it cached", async () => {
    const a = await openSession();
    const b = await openSession(a);
    const c = await openSession(b);
    const aside = await openSession();
    for (const s of [a, b, c, aside]) expect((await meWith(s)).status).toBe(200);
    expect((await call(h, "DELETE", `/v1/auth/sessions/${a.id}`)).status).toBe(204);
    expect((await meWith(b)).status).toBe(401);
    expect((await meWith(c)).status).toBe(401);
    expect((await meWith(aside)).status).toBe(200);
  });

  it("refuses at once a session opened from one that signed out", async () => {
    const a = await openSession();
    const b = await openSession(a);
    expect((await meWith(b)).status).toBe(200);
    const out = await call(h, "DELETE", "/v1/auth/session", {
      token: null,
      headers: { cookie: a.cookie, origin: h.url, [CSRF_HEADER]: a.csrfToken },
    });
    expect(out.status, JSON.stringify(out.body)).toBe(204);
    expect((await meWith(a)).status).toBe(401);
    expect((await meWith(b)).status).toBe(401);
  });

  it("refuses the tokens of a member removed from the organization", async () => {
    const invited = await call(h, "POST", `/v1/orgs/${orgId}/invitations`, {
      body: { email: "leaver@example.test", role: "member" },
    });
    expect(invited.status).toBe(201);
    const link = new URL(invited.body.acceptUrl as string);
    const joined = await call(h, "POST", `/v1/invitations/${invited.body.id}/redeem`, {
      token: null,
      body: { token: link.hash.slice("#token=".length), displayName: "Leaver" },
    });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);
    const cookie = /^([^;]+)/.exec(joined.headers.get("set-cookie") ?? "")![1]!;
    const minted = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, {
      token: null,
      headers: { cookie, origin: h.url, [CSRF_HEADER]: joined.body.csrfToken as string },
      body: { name: "leaver's" },
    });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    const leaverToken = minted.body.token as string;
    expect((await readOrg(leaverToken)).status).toBe(200);
    const userId = (joined.body.acceptance as { userId: string }).userId;
    expect((await call(h, "DELETE", `/v1/orgs/${orgId}/members/${userId}`)).status).toBe(204);
    expect((await readOrg(leaverToken)).status).toBe(401);
  });

  it("refuses the tokens of a deleted project and of a deleted organization", async () => {
    const projectId = (await call(h, "POST", `/v1/orgs/${orgId}/projects`, { body: { name: "gone" } })).body
      .id as string;
    const projectToken = await token({ projectId });
    const readProject = () => call(h, "GET", `/v1/projects/${projectId}`, { token: projectToken.token });
    expect((await readProject()).status).toBe(200);
    expect((await call(h, "DELETE", `/v1/projects/${projectId}`)).status).toBe(204);
    expect((await readProject()).status).toBe(401);

    const doomed = (await call(h, "POST", "/v1/orgs", { body: { name: "Doomed" } })).body.id as string;
    const bound = await call(h, "POST", `/v1/orgs/${doomed}/api-tokens`, { body: { name: "bound" } });
    const list = () => call(h, "GET", "/v1/orgs", { token: bound.body.token as string });
    expect((await list()).status).toBe(200);
    expect((await call(h, "DELETE", `/v1/orgs/${doomed}`)).status).toBe(204);
    expect((await list()).status).toBe(401);
  });
});
