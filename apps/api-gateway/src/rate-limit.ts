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

/** Fixed windows counted in Redis, shared by every gateway replica. Fails open if Redis is unreachable. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly config: RateLimitConfig;
  private readonly prefix: string;

  constructor(redis: Redis, config: RateLimitConfig, prefix = "agentplane:ratelimit") {
    this.redis = redis;
    this.config = config;
    this.prefix = prefix;
  }

  async hit(key: string): Promise<RateLimitResult> {
    try {
      const [count, ttl] = (await this.redis.eval(
        HIT_SCRIPT,
        1,
        `${this.prefix}:${key}`,
        String(this.config.windowSeconds * 1000),
      )) as [number, number];
      return result(this.config, count, ttl > 0 ? ttl : this.config.windowSeconds * 1000);
    } catch {
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
export function createRateLimiter(options: { redisUrl?: string | undefined; limitPerMinute: number }): {
  rateLimiter: RateLimiter;
  rateLimit: RateLimitConfig;
  close(): void;
} {
  const rateLimit = { limit: options.limitPerMinute, windowSeconds: 60 };
  if (!options.redisUrl) return { rateLimiter: new MemoryRateLimiter(rateLimit), rateLimit, close: () => {} };
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  return { rateLimiter: new RedisRateLimiter(redis, rateLimit), rateLimit, close: () => redis.disconnect() };
}
