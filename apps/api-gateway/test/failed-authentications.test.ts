import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.ts";

/**
 * An address that keeps presenting credentials that are refused spends a budget (the per-address
 * limit, here 3 a minute): past it, its credentials are refused with a 429 before any lookup, so
 * tokens cannot be tried as fast as they can be sent. Other addresses are not affected.
 */
describe("refused credentials, per address", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ rateLimit: 3, trustedProxies: "127.0.0.1" });
  });
  afterAll(() => h.close());

  const send = (client: string, headers: Record<string, string>) =>
    fetch(`${h.url}/v1/orgs`, { headers: { "x-forwarded-for": client, ...headers } });
  const bearer = (client: string, token: string) => send(client, { authorization: `Bearer ${token}` });
  const guess = (i: number) => `apl_${String(i).padStart(26, "0")}_${"x".repeat(43)}`;

  it("answers 401 within the budget, then 429 to any credential of that address, the valid ones too", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await bearer("203.0.113.7", guess(i))).status);
    expect(statuses).toEqual([401, 401, 401]);
    // The fourth refusal spends the budget; from then on nothing is looked up.
    await bearer("203.0.113.7", guess(3));
    const blocked = await bearer("203.0.113.7", guess(4));
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("content-type")).toContain("application/problem+json");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await bearer("203.0.113.7", h.ownerToken)).status).toBe(429);
    // A forged session cookie is a refused credential as well.
    const cookie = await send("203.0.113.7", { cookie: `agentplane_session=aps_${"0".repeat(26)}_${"a".repeat(43)}` });
    expect(cookie.status).toBe(429);
  });

  it("leaves other addresses, and requests without credentials, alone", async () => {
    expect((await bearer("203.0.113.8", h.ownerToken)).status).toBe(200);
    expect((await bearer("203.0.113.8", guess(9))).status).toBe(401);
    const anonymous = await send("203.0.113.7", {});
    expect(anonymous.status).toBe(401);
    const installation = await fetch(`${h.url}/v1/installation`, { headers: { "x-forwarded-for": "203.0.113.7" } });
    expect(installation.status).toBe(200);
  });
});
