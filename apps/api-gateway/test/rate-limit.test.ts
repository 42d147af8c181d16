import { requireRedis, TEST_REDIS_URL, testRedisPrefix } from "@agentplane/testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { addressLimitKey, MAX_MEMORY_WINDOWS, MemoryRateLimiter, RedisRateLimiter } from "../src/rate-limit.ts";

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
      return new RedisRateLimiter(client, config, { prefix });
    });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await replicas[i % 2]!.hit("p:tok_1"));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false, false]);
    expect(results[4]!.remaining).toBe(0);
    expect(results[0]!.resetSeconds).toBeGreaterThan(55);
    // Another token is counted apart.
    expect((await replicas[0]!.hit("p:tok_2")).remaining).toBe(4);
  });

  const replicas = (count: number, config: { limit: number; windowSeconds: number }, flushMs = 60_000) => {
    const prefix = testRedisPrefix("rl");
    const client = new Redis(TEST_REDIS_URL);
    clients.push(client);
    const limiters = Array.from({ length: count }, () => {
      const own = new Redis(TEST_REDIS_URL);
      clients.push(own);
      return new RedisRateLimiter(own, config, { prefix, flushMs });
    });
    return { limiters, shared: async (key: string) => Number((await client.get(`${prefix}:${key}`)) ?? 0) };
  };

  it("far below the limit answers from its own count and adds its hits to Redis in one write", async () => {
    const {
      limiters: [a, b],
      shared,
    } = replicas(2, { limit: 1000, windowSeconds: 60 });
    const results = [];
    for (let i = 0; i < 300; i++) results.push(await a!.hit("p:tok"));
    expect(results.map((r) => r.remaining)).toEqual(results.map((_, i) => 1000 - (i + 1)));
    // Only the first hit went to Redis; the other 299 wait for the flush.
    expect(await shared("p:tok")).toBe(1);
    await a!.flush();
    expect(await shared("p:tok")).toBe(300);
    // The other replica counts from the shared window.
    expect((await b!.hit("p:tok")).remaining).toBe(1000 - 301);
  });

  it("sends its local hits on a timer, within flushMs", async () => {
    const {
      limiters: [a],
      shared,
    } = replicas(1, { limit: 1000, windowSeconds: 60 }, 20);
    for (let i = 0; i < 50; i++) await a!.hit("p:tok");
    await vi.waitFor(async () => expect(await shared("p:tok")).toBe(50), { timeout: 5000 });
  });

  it("leaves the decision near the limit to Redis: replicas together allow exactly the limit", async () => {
    const {
      limiters: [a, b],
    } = replicas(2, { limit: 10, windowSeconds: 60 });
    const allowedA = [];
    for (let i = 0; i < 5; i++) allowedA.push((await a!.hit("p:tok")).allowed);
    await a!.flush();
    const fromB = [];
    for (let i = 0; i < 20; i++) fromB.push(await b!.hit("p:tok"));
    const fromA = await a!.hit("p:tok");
    expect(allowedA).toEqual([true, true, true, true, true]);
    expect(fromB.filter((r) => r.allowed)).toHaveLength(5);
    expect(fromB.slice(5).every((r) => !r.allowed && r.remaining === 0)).toBe(true);
    expect(fromA.allowed).toBe(false);
  });

  it("the unsent hits of a replica are counted with its next hit that goes to Redis", async () => {
    const {
      limiters: [a, b],
    } = replicas(2, { limit: 6, windowSeconds: 60 });
    // a: one hit through Redis, two local ones (below half of 6) not yet sent.
    for (let i = 0; i < 3; i++) expect((await a!.hit("p:tok")).allowed).toBe(true);
    // b's first hit goes to Redis and sees only a's first.
    expect((await b!.hit("p:tok")).remaining).toBe(4);
    // a's next hit is past half: it goes to Redis with the two unsent ones.
    expect((await a!.hit("p:tok")).remaining).toBe(1);
  });

  it("a window that ended locally is asked of Redis again", async () => {
    const {
      limiters: [a],
    } = replicas(1, { limit: 100, windowSeconds: 1 });
    for (let i = 0; i < 10; i++) await a!.hit("p:tok");
    // The window ends in Redis (its key's TTL), on Redis's clock: only real time moves it.
    await new Promise((r) => setTimeout(r, 1100));
    const next = await a!.hit("p:tok");
    expect(next.remaining).toBe(99);
    expect(next.resetSeconds).toBe(1);
  });

  it("reports the hits it answered locally and could not send as an outage", async () => {
    const own = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    own.on("error", () => {});
    clients.push(own);
    await new Promise((ready) => own.once("ready", ready));
    const limiter = new RedisRateLimiter(
      own,
      { limit: 1000, windowSeconds: 60 },
      { prefix: testRedisPrefix("rl"), flushMs: 60_000 },
    );
    await limiter.hit("p:tok");
    for (let i = 0; i < 5; i++) await limiter.hit("p:tok");
    expect(limiter.status()).toMatchObject({ failingOpen: false, outages: 0 });
    own.disconnect();
    await limiter.flush();
    expect(limiter.status()).toEqual({ failingOpen: true, failedOpen: 5, outages: 1 });
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
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const limiter = new MemoryRateLimiter({ limit: 1, windowSeconds: 1 });
      expect((await limiter.hit("k")).allowed).toBe(true);
      expect((await limiter.hit("k")).allowed).toBe(false);
      vi.setSystemTime(Date.now() + 999);
      expect((await limiter.hit("k")).allowed).toBe(false);
      vi.setSystemTime(Date.now() + 1);
      expect((await limiter.hit("k")).allowed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps every count when callers flood the table, letting only callers it has no room for through", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const limiter = new MemoryRateLimiter({ limit: 1, windowSeconds: 60 });
      expect((await limiter.hit("p:victim")).allowed).toBe(true);
      expect((await limiter.hit("p:victim")).allowed).toBe(false);
      for (let i = 0; i <= MAX_MEMORY_WINDOWS; i++) await limiter.hit(`ip:flood-${i}`);
      // A full table used to be emptied, handing the limited caller a fresh window.
      expect((await limiter.hit("p:victim")).allowed).toBe(false);
      expect((await limiter.hit("ip:flood-1")).allowed).toBe(false);
      // Windows that end make room: new callers are counted again.
      vi.setSystemTime(Date.now() + 60_000);
      expect((await limiter.hit("p:newcomer")).allowed).toBe(true);
      expect((await limiter.hit("p:newcomer")).allowed).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("rate limit key of an address", () => {
  it("counts an IPv6 client by its /64 and an IPv4 client by its address", () => {
    const a = addressLimitKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    expect(a).toBe("ip6:2001:db8:1:2::/64");
    expect(addressLimitKey("2001:db8:1:2::1")).toBe(a);
    expect(addressLimitKey("2001:0db8:0001:0002:ffff::9%eth0")).toBe(a);
    expect(addressLimitKey("2001:db8:1:3::1")).not.toBe(a);
    expect(addressLimitKey("::1")).toBe("ip6:0:0:0:0::/64");
    expect(addressLimitKey("fe80::1:2:3:4")).toBe("ip6:fe80:0:0:0::/64");
    expect(addressLimitKey("64:ff9b::192.0.2.1")).toBe("ip6:64:ff9b:0:0::/64");
    expect(addressLimitKey("192.0.2.1")).toBe("ip:192.0.2.1");
    expect(addressLimitKey(undefined)).toBe("ip:unknown");
  });
});
