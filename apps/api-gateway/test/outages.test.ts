import type { IncomingMessage } from "node:http";
import { clusterJwtIssuer } from "@agentplane/contracts";
import { MemoryBus } from "@agentplane/events";
import { generateInternalKeys, httpFetch, type Logger, ServiceClient, serveFetch } from "@agentplane/service-kit";
import {
  freePort,
  type LocalServer,
  OwnRedis,
  requireRedis,
  startLocalServer,
  TEST_REDIS_URL,
} from "@agentplane/testkit";
import { Redis } from "ioredis";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../src/app.ts";
import { Authenticator } from "../src/authn/authenticator.ts";
import { OidcVerifier } from "../src/authn/oidc.ts";
import { createRateLimiter, MemoryRateLimiter, RedisRateLimiter } from "../src/rate-limit.ts";

/** A gateway whose tenancy (and identity provider) live at addresses nothing listens on. */
async function gatewayWithDeadTenancy(oidc?: OidcVerifier) {
  const keys = await generateInternalKeys();
  const deadTenancy = `http://127.0.0.1:${await freePort()}`;
  const tenancyFetch = httpFetch(deadTenancy);
  const rateLimit = { limit: 100, windowSeconds: 60 };
  const bus = new MemoryBus();
  const gateway = createGateway({
    targets: { tenancy: { fetch: tenancyFetch, ready: async () => false } },
    keys,
    authenticator: new Authenticator({ tenancy: new ServiceClient("tenancy", tenancyFetch, keys), oidc }),
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
  return {
    url: server.url,
    async close() {
      await server.close();
      gateway.close();
      await bus.close();
    },
  };
}

async function problem(res: Response) {
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    retryAfter: res.headers.get("retry-after"),
    body: (await res.json()) as { type: string; detail: string },
  };
}

describe("an outage of what authentication depends on is a 503 with Retry-After, never a 401", () => {
  let idp: LocalServer;
  let issuer = "";
  let signed = "";

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256" };
    idp = await startLocalServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration")
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      else res.end(JSON.stringify({ keys: [jwk] }));
    });
    issuer = idp.url;
    signed = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(issuer)
      .setSubject("user-1")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(pair.privateKey);
  });
  afterAll(() => idp.close());

  it("answers 503 while tenancy is down for an API token, a cluster token and an OIDC user", async () => {
    const gw = await gatewayWithDeadTenancy(new OidcVerifier({ issuer }));
    try {
      const clusterToken = await new SignJWT({})
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(clusterJwtIssuer("prj_1"))
        .setSubject("cluster")
        .sign((await generateKeyPair("ES256")).privateKey);
      for (const token of ["apt_some_api_token", clusterToken, signed]) {
        const res = await problem(
          await fetch(`${gw.url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } }),
        );
        expect(res).toMatchObject({
          status: 503,
          type: "application/problem+json",
          retryAfter: "5",
          body: { type: expect.stringMatching(/service-unavailable$/) },
        });
      }
      // No token at all is still the caller's problem.
      expect((await fetch(`${gw.url}/v1/auth/me`)).status).toBe(401);
    } finally {
      await gw.close();
    }
  });

  it("answers 503 while the identity provider is down, and 401 for a token it refuses", async () => {
    const deadIssuer = `http://127.0.0.1:${await freePort()}`;
    const gw = await gatewayWithDeadTenancy(new OidcVerifier({ issuer: deadIssuer }));
    try {
      const pair = await generateKeyPair("ES256");
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(deadIssuer)
        .setSubject("user-1")
        .setExpirationTime("5m")
        .sign(pair.privateKey);
      const res = await problem(await fetch(`${gw.url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } }));
      expect(res).toMatchObject({ status: 503, retryAfter: "5" });
      expect(res.body.detail).toMatch(/identity provider/);
    } finally {
      await gw.close();
    }
    // The provider up, the token signed by another key: that one is the token's fault.
    const up = await gatewayWithDeadTenancy(new OidcVerifier({ issuer }));
    try {
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(issuer)
        .setSubject("user-1")
        .setExpirationTime("5m")
        .sign((await generateKeyPair("ES256")).privateKey);
      expect((await fetch(`${up.url}/v1/auth/me`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(
        401,
      );
    } finally {
      await up.close();
    }
  });
});

describe("the Redis rate limiter fails open, logged once per outage and counted", () => {
  const redis = new OwnRedis();
  afterAll(() => redis.stop());

  it("lets requests through while Redis is down, logs the outage once and its end once", async () => {
    await redis.start();
    const lines: string[] = [];
    // What the limiter logs, kept in memory (the pino methods it calls: error and warn).
    const logger = {
      error: (_fields: unknown, message: string) => lines.push(message),
      warn: (_fields: unknown, message: string) => lines.push(message),
    } as unknown as Logger;
    const { rateLimiter, close } = createRateLimiter({ redisUrl: redis.url, limitPerMinute: 5, logger });
    try {
      await expect.poll(async () => (await rateLimiter.hit("warm")).remaining, { timeout: 5000 }).toBe(4);
      await redis.stop();
      for (let i = 0; i < 20; i++) expect((await rateLimiter.hit("k")).allowed).toBe(true);
      expect(rateLimiter.status?.()).toMatchObject({ failingOpen: true, outages: 1 });
      expect(rateLimiter.status?.().failedOpen).toBeGreaterThanOrEqual(20);
      expect(lines.filter((l) => l.includes("Redis unreachable"))).toHaveLength(1);

      await redis.start();
      await expect.poll(async () => (await rateLimiter.hit("k")).remaining, { timeout: 10_000 }).toBe(4);
      expect(rateLimiter.status?.().failingOpen).toBe(false);
      expect(lines.filter((l) => l.includes("limits enforced again"))).toHaveLength(1);
    } finally {
      close();
    }
  });
});

const testRedis = await requireRedis();

/**
 * A rate limiter whose Redis is down lets requests through unlimited: the gateway still serves
 * (readiness unchanged), but `/health` says it is degraded and names the limiter, the per-user one
 * as well as the per-token one.
 */
describe.skipIf(!testRedis.available)(`an outage of a rate limiter's Redis in /health${testRedis.reason}`, () => {
  async function healthWithUserLimiterAt(redisUrl: string) {
    const keys = await generateInternalKeys();
    const rateLimit = { limit: 100, windowSeconds: 60 };
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    redis.on("error", () => {});
    const bus = new MemoryBus();
    const tenancy = { fetch: async () => new Response(null, { status: 204 }), ready: async () => true };
    const gateway = createGateway({
      targets: { tenancy },
      keys,
      authenticator: new Authenticator({ tenancy: new ServiceClient("tenancy", tenancy.fetch, keys) }),
      rateLimiter: new MemoryRateLimiter(rateLimit),
      rateLimit,
      userRateLimiter: new RedisRateLimiter(redis, rateLimit),
      userRateLimit: rateLimit,
      bus,
    });
    try {
      const summary = await gateway.fetch(new Request("http://gateway/health"));
      const ready = await gateway.fetch(new Request("http://gateway/health/ready"));
      return { status: summary.status, body: (await summary.json()) as Record<string, unknown>, ready: ready.status };
    } finally {
      gateway.close();
      redis.disconnect();
      await bus.close();
    }
  }

  it("reports degraded, naming the per-user limiter, while its Redis cannot be reached", async () => {
    const down = await healthWithUserLimiterAt(`redis://127.0.0.1:${await freePort()}`);
    expect(down.status).toBe(200);
    expect(down.ready).toBe(200);
    expect(down.body).toMatchObject({
      status: "degraded",
      ready: true,
      checks: { "rate-limiter:per-user": "down" },
      userRateLimiter: { failingOpen: false, outages: 0 },
    });
  });

  it("reports ok with the limiter up while its Redis answers", async () => {
    const up = await healthWithUserLimiterAt(TEST_REDIS_URL);
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: "ok", checks: { "rate-limiter:per-user": "up" } });
  });
});
