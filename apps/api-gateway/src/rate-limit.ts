import type { Logger } from "@agentplane/service-kit";
import { Redis } from "ioredis";
import type { RateLimitConfig } from "./config.ts";

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  hit(key: string): Promise<RateLimitResult>;
  /** For `/health`: whether limits are enforced right now. */
  status?(): RateLimiterStatus;
}

export interface RateLimiterStatus {
  /** `true` while the shared counter store cannot be reached and requests pass unlimited. */
  failingOpen: boolean;
  /** Requests let through unlimited since the process started. */
  failedOpen: number;
  /** Outages of the counter store since the process started. */
  outages: number;
}

function result(config: RateLimitConfig, count: number, resetMs: number): RateLimitResult {
  return {
    allowed: count <= config.limit,
    limit: config.limit,
    remaining: Math.max(0, config.limit - count),
    resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
  };
}

/** Fixed windows in process memory: the all-in-one mode, one gateway replica. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly config: RateLimitConfig;

  constructor(config: RateLimitConfig) {
    this.config = config;
  }

  async hit(key: string): Promise<RateLimitResult> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (this.windows.size > 100_000) this.windows.clear();
      window = { count: 0, resetAt: now + this.config.windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    window.count++;
    return result(this.config, window.count, window.resetAt - now);
  }
}

const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl}
`;

type RedisWithHit = Redis & { rateLimitHit(key: string, windowMs: string): Promise<[number, number]> };

/**
 * Fixed windows counted in Redis, shared by every gateway replica. Fails open if Redis is
 * unreachable (availability over limits), but never silently: the first failure of an outage is
 * logged, its end too, and every request let through is counted in `/health`.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly config: RateLimitConfig;
  private readonly prefix: string;
  private readonly logger: Logger | undefined;
  private readonly state: RateLimiterStatus = { failingOpen: false, failedOpen: 0, outages: 0 };

  constructor(redis: Redis, config: RateLimitConfig, prefix = "agentplane:ratelimit", logger?: Logger) {
    this.redis = redis;
    this.config = config;
    this.prefix = prefix;
    this.logger = logger;
    if (!("rateLimitHit" in redis)) redis.defineCommand("rateLimitHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
  }

  status(): RateLimiterStatus {
    return { ...this.state };
  }

  async hit(key: string): Promise<RateLimitResult> {
    try {
      // EVALSHA of the script defined once (ioredis loads it on first use), not its text each time.
      const [count, ttl] = await (this.redis as RedisWithHit).rateLimitHit(
        `${this.prefix}:${key}`,
        String(this.config.windowSeconds * 1000),
      );
      if (this.state.failingOpen) {
        this.state.failingOpen = false;
        this.logger?.warn({ failedOpen: this.state.failedOpen }, "rate limiter: Redis is back, limits enforced again");
      }
      return result(this.config, count, ttl > 0 ? ttl : this.config.windowSeconds * 1000);
    } catch (err) {
      this.state.failedOpen++;
      if (!this.state.failingOpen) {
        this.state.failingOpen = true;
        this.state.outages++;
        this.logger?.error(
          { err: (err as Error).message },
          "rate limiter: Redis unreachable, requests pass without limits until it is back",
        );
      }
      return result(this.config, 0, this.config.windowSeconds * 1000);
    }
  }
}

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): policy and current state. */
export function rateLimitHeaders(config: RateLimitConfig, r: RateLimitResult): Record<string, string> {
  return {
    "ratelimit-policy": `"per-token";q=${config.limit};w=${config.windowSeconds}`,
    ratelimit: `"per-token";r=${r.remaining};t=${r.resetSeconds}`,
  };
}

/** The limiter for a deployment: shared counters in Redis when it is configured, else in memory. */
export function createRateLimiter(options: {
  redisUrl?: string | undefined;
  limitPerMinute: number;
  logger?: Logger | undefined;
}): {
  rateLimiter: RateLimiter;
  rateLimit: RateLimitConfig;
  close(): void;
} {
  const rateLimit = { limit: options.limitPerMinute, windowSeconds: 60 };
  if (!options.redisUrl) return { rateLimiter: new MemoryRateLimiter(rateLimit), rateLimit, close: () => {} };
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  // Once connected, no offline queue: while Redis is down a hit fails at once (and fails open)
  // instead of holding the request until a reconnect. Before the first connection, hits wait.
  redis.once("ready", () => {
    redis.options.enableOfflineQueue = false;
  });
  redis.on("error", () => {});
  return {
    rateLimiter: new RedisRateLimiter(redis, rateLimit, undefined, options.logger),
    rateLimit,
    close: () => redis.disconnect(),
  };
}
