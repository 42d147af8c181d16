import { ConfigError } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.ts";
import { createRateLimiter } from "../src/rate-limit.ts";
import { call, type Harness, startHarness } from "./harness.ts";

/**
 * Each token has its own budget (here 10 a minute), and all the tokens of one user together have
 * one more (here 15): creating tokens does not multiply what a user may send. The 429 names the
 * limit that was spent.
 */
describe("the per-user limit", () => {
  let h: Harness;
  const tokens: string[] = [];
  beforeAll(async () => {
    h = await startHarness({ rateLimit: 10, userRateLimit: 15 });
    // Three requests of the owner's user: the organization and two tokens of the same user.
    const org = await call(h, "POST", "/v1/orgs", { body: { name: "Limits" } });
    for (const name of ["a", "b"]) {
      const created = await call(h, "POST", `/v1/orgs/${org.body.id}/api-tokens`, { body: { name } });
      expect(created.status).toBe(201);
      tokens.push(created.body.token as string);
    }
  });
  afterAll(() => h.close());

  it("refuses a token past its own limit with the per-token 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await call(h, "GET", "/v1/auth/me", { token: tokens[0]! })).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const over = await call(h, "GET", "/v1/auth/me", { token: tokens[0]! });
    expect(over.status).toBe(429);
    expect(over.body.policy).toBe("per-token");
    expect(over.body.detail).toContain("for this token (per-token limit)");
    expect(over.headers.get("ratelimit-policy")).toBe('"per-token";q=10;w=60');
  });

  it("refuses another token of the same user once the user's tokens together spent the per-user limit", async () => {
    // The user has spent 13 of 15: the second token, fresh on its own, gets the 2 left.
    const first = await call(h, "GET", "/v1/auth/me", { token: tokens[1]! });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"per-token";q=10;w=60, "per-user";q=15;w=60');
    expect(first.headers.get("ratelimit")).toMatch(/^"per-token";r=9;t=\d+, "per-user";r=1;t=\d+$/);
    expect((await call(h, "GET", "/v1/auth/me", { token: tokens[1]! })).status).toBe(200);
    const over = await call(h, "GET", "/v1/auth/me", { token: tokens[1]! });
    expect(over.status).toBe(429);
    expect(over.headers.get("content-type")).toContain("application/problem+json");
    expect(over.body.policy).toBe("per-user");
    expect(over.body.detail).toBe(
      "More than 15 requests in 60 s for this user's tokens and sessions together (per-user limit)",
    );
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(over.headers.get("ratelimit")).toMatch(/"per-user";r=0;t=\d+$/);
    // The user's other tokens are refused as well, though each has budget of its own left.
    expect((await call(h, "GET", "/v1/auth/me")).body.policy).toBe("per-user");
  });
});

describe("RATE_LIMIT_PER_USER_PER_MINUTE", () => {
  it("defaults to four times the per-token limit", () => {
    const config = configFromEnv({ RATE_LIMIT_PER_MINUTE: "100" });
    expect(config.rateLimitPerUserPerMinute).toBeUndefined();
    const limits = createRateLimiter({ limitPerMinute: config.rateLimitPerMinute });
    expect(limits.userRateLimit).toEqual({ limit: 400, windowSeconds: 60 });
    const set = configFromEnv({ RATE_LIMIT_PER_MINUTE: "100", RATE_LIMIT_PER_USER_PER_MINUTE: "250" });
    expect(
      createRateLimiter({ limitPerMinute: 100, userLimitPerMinute: set.rateLimitPerUserPerMinute }).userRateLimit.limit,
    ).toBe(250);
  });

  it("stops the start naming the variable when it is not a whole number or below the per-token limit", () => {
    for (const value of ["lots", "0", "1.5", "99"]) {
      let error: unknown;
      try {
        configFromEnv({ RATE_LIMIT_PER_MINUTE: "100", RATE_LIMIT_PER_USER_PER_MINUTE: value });
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variables, value).toEqual(["RATE_LIMIT_PER_USER_PER_MINUTE"]);
    }
  });
});
