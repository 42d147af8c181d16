import { createRequire } from "node:module";
import { isIP } from "node:net";
import type { Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { Logger } from "@agentplane/service-kit";
import type { Redis } from "ioredis";
import ipaddr from "ipaddr.js";
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
  /**
   * For `/health`: whether the shared counter store answers now (resolves), else rejects. Absent
   * for a limiter that needs nothing outside the process.
   */
  check?(): Promise<void>;
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

/**
 * Windows kept in process memory at most. A full table keeps the counts it has (dropping them
 * would hand every caller a fresh budget); a caller it has no room for is let through uncounted
 * until windows end and make room.
 */
export const MAX_MEMORY_WINDOWS = 100_000;

/** Fixed windows in process memory: the all-in-one mode, one gateway replica. */
export class MemoryRateLimiter implements RateLimiter {
  /** Ordered by window start (a renewed window is moved to the end), hence by window end. */
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly config: RateLimitConfig;

  constructor(config: RateLimitConfig) {
    this.config = config;
  }

  async hit(key: string): Promise<RateLimitResult> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (window) this.windows.delete(key);
      else if (this.windows.size >= MAX_MEMORY_WINDOWS) this.dropEnded(now);
      const windowMs = this.config.windowSeconds * 1000;
      if (this.windows.size >= MAX_MEMORY_WINDOWS) return result(this.config, 1, windowMs);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count++;
    return result(this.config, window.count, window.resetAt - now);
  }

  private dropEnded(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.resetAt > now) return;
      this.windows.delete(key);
    }
  }
}

/**
 * The key a caller known only by its address is counted under. One IPv6 client usually holds a
 * whole /64 (SLAAC, privacy addresses), so it is counted by that prefix: per address, it could
 * take a fresh budget with each of its 2^64 addresses.
 */
export function addressLimitKey(address: string | undefined): string {
  if (!address || isIP(address) !== 6) return `ip:${address ?? "unknown"}`;
  const parsed = ipaddr.IPv6.parse(address);
  // An IPv4 client as a dual-stack socket names it (`::ffff:a.b.c.d`) is that IPv4 client: its
  // /64 is every IPv4 client's.
  if (parsed.isIPv4MappedAddress()) return `ip:${parsed.toIPv4Address().toString()}`;
  const prefix = parsed.parts.slice(0, 4);
  return `ip6:${prefix.map((part) => part.toString(16)).join(":")}::/64`;
}

/** Adds ARGV[2] hits to the window (opening it with ARGV[1] ms if new): the count and time left. */
const ADD_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl}
`;

type RedisWithAdd = Redis & {
  rateLimitAdd(key: string, windowMs: string, hits: string): Promise<[number, number]>;
};

/** What one replica knows of a window: the shared count Redis last answered and its own hits since. */
interface LocalWindow {
  count: number;
  pending: number;
  resetAt: number;
}

export interface RedisRateLimiterOptions {
  prefix?: string;
  logger?: Logger | undefined;
  /**
   * Below this share of the limit (default 0.5) a replica answers from its own view of the window
   * and sends its hits in one write per `flushMs`; from there up every hit is counted in Redis
   * before it is answered, so whether a request is over the limit is decided by Redis. 0 counts
   * every hit in Redis.
   */
  localShare?: number;
  /** How often hits answered locally are added to the shared count (default 50 ms). */
  flushMs?: number;
}

/**
 * Fixed windows counted in Redis, shared by every gateway replica. Far below the limit a hit is
 * answered from the replica's last view of the shared count plus its own hits, which it adds to
 * Redis every `flushMs`: no Redis round trip per request. Other replicas' hits are seen within
 * that delay, so a limit can be overshot only by hits that take a window from under `localShare`
 * of the limit to over the limit within one flush (replicas × request rate × `flushMs`).
 *
 * Fails open if Redis is unreachable (availability over limits), but never silently: the first
 * failure of an outage is logged, its end too, and every request let through is counted in
 * `/health`.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithAdd;
  private readonly config: RateLimitConfig;
  private readonly prefix: string;
  private readonly logger: Logger | undefined;
  private readonly state: RateLimiterStatus = { failingOpen: false, failedOpen: 0, outages: 0 };
  private readonly localBelow: number;
  private readonly flushMs: number;
  private readonly windows = new Map<string, LocalWindow>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(redis: Redis, config: RateLimitConfig, options: RedisRateLimiterOptions = {}) {
    this.redis = redis as RedisWithAdd;
    this.config = config;
    this.prefix = options.prefix ?? "agentplane:ratelimit";
    this.logger = options.logger;
    this.localBelow = config.limit * (options.localShare ?? 0.5);
    this.flushMs = options.flushMs ?? 50;
    if (!("rateLimitAdd" in redis)) redis.defineCommand("rateLimitAdd", { numberOfKeys: 1, lua: ADD_SCRIPT });
  }

  status(): RateLimiterStatus {
    return { ...this.state };
  }

  /** Asks Redis now (a PING): an idle limiter learns of an outage before a request would. */
  async check(): Promise<void> {
    await this.redis.ping();
  }

  async hit(key: string): Promise<RateLimitResult> {
    const now = Date.now();
    const local = this.windows.get(key);
    if (local && local.resetAt > now && local.count + local.pending + 1 <= this.localBelow) {
      local.pending++;
      this.flushTimer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      return result(this.config, local.count + local.pending, local.resetAt - now);
    }
    // This hit and the replica's unsent ones, counted in Redis before the answer.
    const hits = 1 + (local && local.resetAt > now ? local.pending : 0);
    if (local) local.pending = 0;
    try {
      const [count, ttl] = await this.add(key, hits);
      if (this.state.failingOpen) {
        this.state.failingOpen = false;
        this.logger?.warn({ failedOpen: this.state.failedOpen }, "rate limiter: Redis is back, limits enforced again");
      }
      const resetMs = ttl > 0 ? ttl : this.config.windowSeconds * 1000;
      this.remember(key, count, resetMs);
      return result(this.config, count, resetMs);
    } catch (err) {
      this.windows.delete(key);
      this.failOpen(err, 1);
      return result(this.config, 0, this.config.windowSeconds * 1000);
    }
  }

  /** Redis could not count `hits`: they pass uncounted, and the outage is logged once and reported. */
  private failOpen(err: unknown, hits: number): void {
    this.state.failedOpen += hits;
    if (this.state.failingOpen) return;
    this.state.failingOpen = true;
    this.state.outages++;
    this.logger?.error(
      { err: (err as Error).message },
      "rate limiter: Redis unreachable, requests pass without limits until it is back",
    );
  }

  /** Sends the hits answered locally; windows that ended are forgotten. */
  async flush(): Promise<void> {
    this.flushTimer = undefined;
    const now = Date.now();
    const sends: Promise<void>[] = [];
    for (const [key, local] of this.windows) {
      if (local.resetAt <= now && local.pending === 0) {
        this.windows.delete(key);
        continue;
      }
      if (local.pending === 0) continue;
      const hits = local.pending;
      local.pending = 0;
      sends.push(
        this.add(key, hits).then(
          ([count, ttl]) => this.remember(key, count, ttl > 0 ? ttl : this.config.windowSeconds * 1000),
          // Redis is down: these hits passed uncounted (reported), and the next hit asks Redis.
          (err) => {
            this.windows.delete(key);
            this.failOpen(err, hits);
          },
        ),
      );
    }
    await Promise.all(sends);
  }

  private add(key: string, hits: number): Promise<[number, number]> {
    // EVALSHA of the script defined once (ioredis loads it on first use), not its text each time.
    return this.redis.rateLimitAdd(`${this.prefix}:${key}`, String(this.config.windowSeconds * 1000), String(hits));
  }

  private remember(key: string, count: number, resetMs: number): void {
    const local = this.windows.get(key);
    if (local) {
      local.count = count;
      local.resetAt = Date.now() + resetMs;
      return;
    }
    if (this.windows.size > 100_000) this.windows.clear();
    this.windows.set(key, { count, pending: 0, resetAt: Date.now() + resetMs });
  }
}

/** The limits a request with a principal is counted against, named as in the RateLimit headers. */
export type LimitPolicy = "per-token" | "per-user";

/** How many times the per-token limit a user's tokens and sessions get together by default. */
export const DEFAULT_USER_LIMIT_MULTIPLE = 4;

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): policy and current state. */
export function rateLimitHeaders(config: RateLimitConfig, r: RateLimitResult): Record<string, string> {
  return limitHeaders([{ policy: "per-token", config, result: r }]);
}

/** The RateLimit header fields of every limit a request was counted against, one item each. */
export function limitHeaders(
  counted: readonly { policy: LimitPolicy; config: RateLimitConfig; result: RateLimitResult }[],
): Record<string, string> {
  return {
    "ratelimit-policy": counted.map((c) => `"${c.policy}";q=${c.config.limit};w=${c.config.windowSeconds}`).join(", "),
    ratelimit: counted.map((c) => `"${c.policy}";r=${c.result.remaining};t=${c.result.resetSeconds}`).join(", "),
  };
}

/** The limiters of a gateway: per token (and per address without one), and per user. */
export interface GatewayLimits {
  rateLimiter: RateLimiter;
  rateLimit: RateLimitConfig;
  /** Counts the requests of all of a user's tokens and sessions together. */
  userRateLimiter: RateLimiter;
  userRateLimit: RateLimitConfig;
}

/**
 * The user whose budget a principal's requests also spend: a user's own (session, OIDC), or the
 * user an API token acts for. Clusters, sandboxes and services have only their own limit.
 */
export function limitUserOf(principal: Principal): string | undefined {
  if (principal.type === "user") return principal.id;
  if (principal.type === "api_token") return principal.userId;
  return undefined;
}

/**
 * Counts a request with a principal against its own limit, then its user's: the headers of both,
 * and the 429 problem of the first one spent (naming it in `detail` and `policy`). Tokens of one
 * user each have the per-token budget, but together no more than the per-user one.
 */
export async function limitPrincipal(
  limits: GatewayLimits,
  principal: Principal,
): Promise<{ headers: Record<string, string>; refused?: ProblemError }> {
  const own = await limits.rateLimiter.hit(`p:${principal.id}`);
  const counted: { policy: LimitPolicy; config: RateLimitConfig; result: RateLimitResult }[] = [
    { policy: "per-token", config: limits.rateLimit, result: own },
  ];
  const userId = own.allowed ? limitUserOf(principal) : undefined;
  if (userId !== undefined) {
    counted.push({
      policy: "per-user",
      config: limits.userRateLimit,
      result: await limits.userRateLimiter.hit(`u:${userId}`),
    });
  }
  const headers = limitHeaders(counted);
  const spent = counted.find((c) => !c.result.allowed);
  if (!spent) return { headers };
  const whose = spent.policy === "per-user" ? "this user's tokens and sessions together" : "this token";
  return {
    headers,
    refused: new ProblemError("rate-limited", {
      detail: `More than ${spent.config.limit} requests in ${spent.config.windowSeconds} s for ${whose} (${spent.policy} limit)`,
      extensions: { policy: spent.policy },
      headers: { ...headers, "retry-after": String(spent.result.resetSeconds) },
    }),
  };
}

/** The limiter for a deployment: shared counters in Redis when it is configured, else in memory. */
export function createRateLimiter(options: {
  redisUrl?: string | undefined;
  limitPerMinute: number;
  /** Per user (default `DEFAULT_USER_LIMIT_MULTIPLE` × `limitPerMinute`). */
  userLimitPerMinute?: number | undefined;
  logger?: Logger | undefined;
}): GatewayLimits & { close(): void } {
  const rateLimit = { limit: options.limitPerMinute, windowSeconds: 60 };
  const userRateLimit = {
    limit: options.userLimitPerMinute ?? options.limitPerMinute * DEFAULT_USER_LIMIT_MULTIPLE,
    windowSeconds: 60,
  };
  if (!options.redisUrl) {
    return {
      rateLimiter: new MemoryRateLimiter(rateLimit),
      rateLimit,
      userRateLimiter: new MemoryRateLimiter(userRateLimit),
      userRateLimit,
      close: () => {},
    };
  }
  // Loaded only here (ioredis is CommonJS): a gateway without Redis never loads the client.
  const { Redis: RedisClient } = createRequire(import.meta.url)("ioredis") as typeof import("ioredis");
  const redis = new RedisClient(options.redisUrl, { maxRetriesPerRequest: 1 });
  // Once connected, no offline queue: while Redis is down a hit fails at once (and fails open)
  // instead of holding the request until a reconnect. Before the first connection, hits wait.
  redis.once("ready", () => {
    redis.options.enableOfflineQueue = false;
  });
  redis.on("error", () => {});
  return {
    rateLimiter: new RedisRateLimiter(redis, rateLimit, { logger: options.logger }),
    rateLimit,
    userRateLimiter: new RedisRateLimiter(redis, userRateLimit, { logger: options.logger }),
    userRateLimit,
    close: () => redis.disconnect(),
  };
}
