import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

describe("gateway in front of tenancy", () => {
  let h: Harness;
  const audits: AuditRecorded[] = [];

  beforeAll(async () => {
    h = await startHarness();
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(() => h.close());

  it("authenticates the bootstrap owner token and forwards the identity", async () => {
    const me = await call(h, "GET", "/v1/auth/me");
    expect(me.status).toBe(200);
    expect(me.headers.get("x-request-id")).toBeTruthy();
    expect(me.headers.get("ratelimit")).toMatch(/^"per-token";r=\d+;t=\d+, "per-user";r=\d+;t=\d+$/);
  });

  it("answers 401 with WWW-Authenticate for a missing, malformed, unknown or foreign-issuer token", async () => {
    const foreignJwt = `${Buffer.from('{"alg":"ES256"}').toString("base64url")}.${Buffer.from('{"iss":"https://evil.example","sub":"x"}').toString("base64url")}.sig`;
    for (const token of [null, "apl_unknown_secret", "garbage", foreignJwt]) {
      const res = await call(h, "GET", "/v1/auth/me", { token });
      expect(res.status, String(token)).toBe(401);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    }
  });

  it("says how to send the token when none is found, as when the Bearer word is left out", async () => {
    const sent: Record<string, string>[] = [
      {},
      { authorization: h.ownerToken },
      { authorization: `Token ${h.ownerToken}` },
    ];
    for (const headers of sent) {
      const res = await call(h, "GET", "/v1/auth/me", { token: null, headers });
      expect(res.status).toBe(401);
      expect(res.body.detail).toBe("A bearer token is required: send the header Authorization: Bearer <token>");
    }
  });

  it("answers unknown paths with 404 and wrong methods with 405 and Allow", async () => {
    const missing = await call(h, "GET", "/v1/definitely-not-here");
    expect(missing.status).toBe(404);
    expect(missing.body.type).toMatch(/\/not-found$/);
    const wrong = await call(h, "DELETE", "/v1/auth/me");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
  });

  it("refuses bodies over 1 MiB with 413 and malformed JSON with 400", async () => {
    const big = await call(h, "POST", "/v1/orgs", { body: JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) }) });
    expect(big.status).toBe(413);
    const malformed = await call(h, "POST", "/v1/orgs", { body: "{nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get("content-type")).toBe("application/problem+json");
  });

  it("publishes an audit record for mutating requests and for denied ones", async () => {
    const created = await call(h, "POST", "/v1/orgs", { body: { name: "Audited Org" } });
    expect(created.status).toBe(201);
    await call(h, "GET", "/v1/auth/me", { token: "apl_wrong_wrong" });
    await h.bus.drain();
    const create = audits.find((a) => a.requestId === created.headers.get("x-request-id") && a.source === "request");
    expect(create?.action).toBe("createOrganization");
    expect(create).toMatchObject({ outcome: "success", status: 201, method: "POST", source: "request" });
    expect(create!.principal.type).not.toBe("anonymous");
    expect(create!.requestId).toBe(created.headers.get("x-request-id"));
    const denied = audits.find((a) => a.action === "getMe" && a.status === 401);
    expect(denied).toMatchObject({ outcome: "denied", principal: { type: "anonymous" } });
    // Plain reads are not audited.
    expect(audits.some((a) => a.action === "getMe" && a.status === 200)).toBe(false);
  });

  it("rejects a revoked API token within seconds", async () => {
    const org = await call(h, "POST", "/v1/orgs", { body: { name: "Revocation Org" } });
    const created = await call(h, "POST", `/v1/orgs/${org.body.id}/api-tokens`, { body: { name: "short-lived" } });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    expect((await call(h, "GET", "/v1/auth/me", { token })).status).toBe(200);
    expect((await call(h, "DELETE", `/v1/api-tokens/${created.body.id}`)).status).toBe(204);
    // The gateway trusts a resolved token for 2 s: the revocation shows within that.
    await vi.waitFor(async () => expect((await call(h, "GET", "/v1/auth/me", { token })).status).toBe(401), {
      timeout: 5000,
      interval: 100,
    });
  });

  it("answers the API's own address with where its description and reference are", async () => {
    for (const path of ["/v1", "/v1/"]) {
      const index = await fetch(`${h.url}${path}`);
      expect(index.status, path).toBe(200);
      const body = (await index.json()) as Record<string, string>;
      expect(body).toMatchObject({ version: "v1", openapi: `${h.url}/v1/openapi.json`, reference: `${h.url}/docs` });
      expect((await fetch(body.openapi as string)).status).toBe(200);
    }
    expect((await fetch(`${h.url}/v1/nothing-here`)).status).toBe(404);
  });

  it("serves the OpenAPI document and the API reference page", async () => {
    const doc = await fetch(`${h.url}/v1/openapi.json`);
    expect(doc.status).toBe(200);
    const body = (await doc.json()) as { paths: Record<string, unknown> };
    expect(Object.keys(body.paths)).toContain("/v1/auth/me");
    const page = await fetch(`${h.url}/docs`);
    expect(await page.text()).toContain("/docs/reference.js");
    // Where a token may be typed in: never inside another site's frame.
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    // It shares the console's origin: its own scripts only, the inline one by its hash.
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self' 'sha256-[\w+/]+=*'(;|$)/);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    const script = await fetch(`${h.url}/docs/reference.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Number(script.headers.get("content-length") ?? (await script.arrayBuffer()).byteLength)).toBeGreaterThan(
      100_000,
    );
  });

  it("reports readiness of each service on /health", async () => {
    const res = await fetch(`${h.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok", services: { tenancy: "ready" } });
  });
});

describe("gateway rate limit", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ rateLimit: 3 });
  });
  afterAll(() => h.close());

  it("answers 429 rate-limited with Retry-After and RateLimit headers past the per-token limit", async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await call(h, "GET", "/v1/auth/me");
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(last!.body.type).toMatch(/\/rate-limited$/);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last!.headers.get("ratelimit-policy")).toBe('"per-token";q=3;w=60');
    // Another token has its own budget.
    const other = await call(h, "GET", "/v1/auth/me", { token: "apl_unknown_x" });
    expect(other.status).toBe(401);
  });
});
