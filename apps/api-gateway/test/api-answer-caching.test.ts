// An API answer is the caller's own data (organizations, members, tokens' names, audit records):
// no cache may keep it, neither a shared proxy nor the browser (whose disk and back/forward
// history outlive a sign-out), and no browser may sniff it into another type. A service that
// chose a policy of its own (the JWKS) keeps it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Harness, startHarness } from "./harness.ts";

for (const tenancyOverHttp of [false, true]) {
  describe(`API answers and caches (tenancy ${tenancyOverHttp ? "over HTTP" : "in process"})`, () => {
    let h: Harness;
    let orgId: string;
    let projectId: string;

    beforeAll(async () => {
      h = await startHarness({ tenancyOverHttp });
      orgId = (await call(h, "POST", "/v1/orgs", { body: { name: "Cached" } })).body.id as string;
      projectId = (await call(h, "POST", `/v1/orgs/${orgId}/projects`, { body: { name: "p" } })).body.id as string;
    });
    afterAll(() => h?.close());

    it("answers an authenticated read with no-store and nosniff", async () => {
      for (const path of ["/v1/orgs", `/v1/orgs/${orgId}`, `/v1/orgs/${orgId}/members`, "/v1/auth/me"]) {
        const res = await call(h, "GET", path);
        expect(res.status, path).toBe(200);
        expect(res.headers.get("cache-control"), path).toBe("no-store");
        expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      }
    });

    it("answers a write, a 201 and a refusal with no-store too", async () => {
      const created = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, { body: { name: "t" } });
      expect(created.status).toBe(201);
      // The token's secret is in this body: above all, no cache keeps it.
      expect(created.headers.get("cache-control")).toBe("no-store");
      const denied = await call(h, "GET", `/v1/orgs/${orgId}/members`, { token: created.body.token as string });
      expect(denied.headers.get("cache-control")).toBe("no-store");
    });

    it("answers the session's exchange (the CSRF token) with no-store", async () => {
      const res = await call(h, "POST", "/v1/auth/sessions", { headers: { origin: h.url } });
      expect(res.status).toBe(201);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const cookie = /^([^;]+)/.exec(res.headers.get("set-cookie") ?? "")![1]!;
      const current = await call(h, "GET", "/v1/orgs", { token: null, headers: { cookie } });
      expect(current.status).toBe(200);
      expect(current.headers.get("cache-control")).toBe("no-store");
    });

    it("keeps a policy the service chose (the JWKS)", async () => {
      const res = await call(h, "GET", `/v1/projects/${projectId}/.well-known/jwks.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("max-age=60");
    });
  });
}
