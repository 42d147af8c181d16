import type { IncomingMessage } from "node:http";
import { CSRF_HEADER } from "@agentplane/contracts";
import { type Bus, MemoryBus } from "@agentplane/events";
import { BullMqBus } from "@agentplane/events/bullmq";
import { inProcessFetch, type RunningServer, ServiceClient, serveFetch } from "@agentplane/service-kit";
import { requireRedis, TEST_REDIS_URL, testRedisPrefix } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createGateway, type Gateway } from "../src/app.ts";
import { Authenticator } from "../src/authn/authenticator.ts";
import { MemoryRateLimiter } from "../src/rate-limit.ts";
import { type Harness, startHarness } from "./harness.ts";

const redis = await requireRedis();

/** A gateway replica in front of the harness's tenancy, on the given bus; a resolved credential is trusted a minute. */
async function replica(h: Harness, bus: Bus): Promise<{ url: string; gateway: Gateway; server: RunningServer }> {
  const rateLimit = { limit: 10_000, windowSeconds: 60 };
  const gateway = createGateway({
    targets: { tenancy: { fetch: inProcessFetch(h.tenancy), ready: () => h.tenancy.ready() } },
    keys: h.keys,
    authenticator: new Authenticator({
      tenancy: new ServiceClient("tenancy", inProcessFetch(h.tenancy), h.keys),
      opaqueTtlMs: 60_000,
    }),
    rateLimiter: new MemoryRateLimiter(rateLimit),
    rateLimit,
    userRateLimiter: new MemoryRateLimiter(rateLimit),
    userRateLimit: rateLimit,
    bus,
  });
  const server = await serveFetch((req, env: { incoming?: IncomingMessage } | undefined) => gateway.fetch(req, env), {
    port: 0,
    hostname: "127.0.0.1",
  });
  return { url: server.url, gateway, server };
}

const buses: { name: string; skip: boolean; make: () => [Bus, Bus] }[] = [
  {
    name: "one in-memory bus",
    skip: false,
    make: () => {
      const bus = new MemoryBus();
      return [bus, bus];
    },
  },
  {
    name: `a bus in Redis${redis.reason}`,
    skip: !redis.available,
    make: () => {
      const prefix = testRedisPrefix("revocations");
      return [new BullMqBus({ url: TEST_REDIS_URL, prefix }), new BullMqBus({ url: TEST_REDIS_URL, prefix })];
    },
  },
];

/**
 * Two gateway replicas, each trusting what it resolved for a minute (to make the window plain): a
 * token revoked or a session signed out through one of them stops working on the other with the
 * next request, told by a notice on their bus, not when the other's cache of it ends.
 */
for (const { name, skip, make } of buses) {
  describe.skipIf(skip)(`revocation across gateway replicas on ${name}`, () => {
    let h: Harness;
    let buses: [Bus, Bus];
    let a: Awaited<ReturnType<typeof replica>>;
    let b: Awaited<ReturnType<typeof replica>>;
    let orgId: string;

    const send = (url: string, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

    beforeAll(async () => {
      h = await startHarness();
      buses = make();
      a = await replica(h, buses[0]);
      b = await replica(h, buses[1]);
      const org = await send(a.url, "POST", "/v1/orgs", bearer(h.ownerToken), { name: "Replicas" });
      orgId = ((await org.json()) as { id: string }).id;
    });
    afterAll(async () => {
      for (const r of [a, b]) {
        await r?.server.close();
        r?.gateway.close();
      }
      await Promise.all([...new Set(buses ?? [])].map((bus) => bus.close()));
      await h?.close();
    });

    it("refuses on the other replica a token revoked through one", async () => {
      const created = await send(a.url, "POST", `/v1/orgs/${orgId}/api-tokens`, bearer(h.ownerToken), { name: "t" });
      expect(created.status).toBe(201);
      const { id, token } = (await created.json()) as { id: string; token: string };
      const readOrg = (url: string) => send(url, "GET", `/v1/orgs/${orgId}`, bearer(token));
      // Both replicas have resolved the token, and trust it for a minute.
      expect((await readOrg(a.url)).status).toBe(200);
      expect((await readOrg(b.url)).status).toBe(200);
      expect((await send(a.url, "DELETE", `/v1/api-tokens/${id}`, bearer(h.ownerToken))).status).toBe(204);
      expect((await readOrg(a.url)).status).toBe(401);
      await vi.waitFor(async () => expect((await readOrg(b.url)).status).toBe(401), { timeout: 1000, interval: 20 });
    });

    it("refuses on the other replica a session signed out through one", async () => {
      const opened = await send(a.url, "POST", "/v1/auth/sessions", { ...bearer(h.ownerToken), origin: a.url });
      expect(opened.status).toBe(201);
      const cookie = /^([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!;
      const { csrfToken } = (await opened.json()) as { csrfToken: string };
      const me = (url: string) => send(url, "GET", "/v1/auth/me", { cookie });
      expect((await me(a.url)).status).toBe(200);
      expect((await me(b.url)).status).toBe(200);
      const out = await send(a.url, "DELETE", "/v1/auth/session", { cookie, origin: a.url, [CSRF_HEADER]: csrfToken });
      expect(out.status).toBe(204);
      expect((await me(a.url)).status).toBe(401);
      await vi.waitFor(async () => expect((await me(b.url)).status).toBe(401), { timeout: 1000, interval: 20 });
    });
  });
}
