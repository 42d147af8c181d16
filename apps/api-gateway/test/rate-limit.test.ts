import { requireRedis, TEST_REDIS_URL, testRedisPrefix } from "@agentplane/testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryRateLimiter, RedisRateLimiter } from "../src/rate-limit.ts";

const redis = await requireRedis();

describe.skipIf(!redis.available)(`rate limit counted in Redis${redis.reason}`, () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });

  it("shares one window between gateway replicas", async () => {
    const prefix = testRedisPrefix("rl");
    const config = { limit: 5, windowSeconds: 60 };
    const replicas = [0, 1].map(() => {
      const client = new Redis(TEST_REDIS_URL);
      clients.push(client);
      return new RedisRateLimiter(client, config, prefix);
    });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await replicas[i % 2]!.hit("p:tok_1"));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false, false]);
    expect(results[4]!.remaining).toBe(0);
    expect(results[0]!.resetSeconds).toBeGreaterThan(55);
    // Another token is counted apart.
    expect((await replicas[0]!.hit("p:tok_2")).remaining).toBe(4);
  });

  it("fails open when Redis is unreachable rather than refusing every request", async () => {
    const down = new Redis("redis://127.0.0.1:1", {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    down.on("error", () => {});
    clients.push(down);
    const limiter = new RedisRateLimiter(down, { limit: 1, windowSeconds: 60 });
    expect((await limiter.hit("p:x")).allowed).toBe(true);
    expect((await limiter.hit("p:x")).allowed).toBe(true);
  });
});

describe("rate limit in memory", () => {
  it("opens a new window after the old one ends", async () => {
    const limiter = new MemoryRateLimiter({ limit: 1, windowSeconds: 1 });
    expect((await limiter.hit("k")).allowed).toBe(true);
    expect((await limiter.hit("k")).allowed).toBe(false);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await limiter.hit("k")).allowed).toBe(true);
  });
});
