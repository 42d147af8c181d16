import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { call, type Harness, sandboxStandIn, startHarness } from "./harness.ts";

const EXEC_PATH = "/v1/projects/prj_x/sandboxes/sbx_x/exec";

interface UpgradeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body?: { type: string; detail: string; policy?: string };
}

/**
 * A WebSocket upgrade is a request like any other for the rate limits: each one is counted once
 * against its token's limit (here 3 a minute) and its user's (here 5), together with the user's
 * plain requests, and past either it is refused with the 429 a plain request gets.
 */
describe("rate limits on WebSocket upgrades", () => {
  let h: Harness;
  let token = "";
  beforeAll(async () => {
    h = await startHarness({ rateLimit: 3, userRateLimit: 5, extraTargets: { sandbox: sandboxStandIn() } });
    // Two requests of the owner's user: an organization, and a token of the same user.
    const org = await call(h, "POST", "/v1/orgs", { body: { name: "Upgrades" } });
    const created = await call(h, "POST", `/v1/orgs/${org.body.id}/api-tokens`, { body: { name: "ws" } });
    expect(created.status).toBe(201);
    token = created.body.token as string;
  });
  afterAll(() => h.close());

  const upgrade = (bearer: string) =>
    new Promise<UpgradeAnswer>((resolve, reject) => {
      const ws = new WebSocket(`${h.url.replace("http", "ws")}${EXEC_PATH}`, ["v5.channel.k8s.io"], {
        headers: { authorization: `Bearer ${bearer}` },
      });
      ws.once("open", () => {
        ws.close();
        resolve({ status: 101, headers: {} });
      });
      ws.once("unexpected-response", (_req, res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.once("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
      });
      ws.once("error", reject);
    });

  it("counts an upgrade as one request of its token, and refuses it past the per-token limit", async () => {
    expect((await upgrade(token)).status).toBe(101);
    expect((await call(h, "GET", "/v1/auth/me", { token })).status).toBe(200);
    expect((await upgrade(token)).status).toBe(101);
    const over = await upgrade(token);
    expect(over.status).toBe(429);
    expect(over.headers["content-type"]).toBe("application/problem+json");
    expect(over.body?.type).toMatch(/\/rate-limited$/);
    expect(over.body?.policy).toBe("per-token");
    expect(over.body?.detail).toBe("More than 3 requests in 60 s for this token (per-token limit)");
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    expect(over.headers["ratelimit-policy"]).toBe('"per-token";q=3;w=60');
    expect(over.headers.ratelimit).toMatch(/^"per-token";r=0;t=\d+$/);
    // The token's plain requests are refused as well: one budget for both.
    const plain = await call(h, "GET", "/v1/auth/me", { token });
    expect(plain.status).toBe(429);
    expect(plain.headers.get("ratelimit-policy")).toBe(over.headers["ratelimit-policy"]);
  });

  it("refuses an upgrade past the per-user limit on a token with budget of its own left", async () => {
    // The user spent 5 of 5 (2 by the owner, 3 by the other token); the owner's token has 1 left.
    const over = await upgrade(h.ownerToken);
    expect(over.status).toBe(429);
    expect(over.body?.policy).toBe("per-user");
    expect(over.body?.detail).toBe(
      "More than 5 requests in 60 s for this user's tokens and sessions together (per-user limit)",
    );
    expect(over.headers["ratelimit-policy"]).toBe('"per-token";q=3;w=60, "per-user";q=5;w=60');
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
  });
});
