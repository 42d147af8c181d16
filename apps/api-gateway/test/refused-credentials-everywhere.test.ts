import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { IngressRouter } from "../src/ingress-router.ts";
import { type Harness, sandboxStandIn, startHarness } from "./harness.ts";

const EXEC_PATH = "/v1/projects/prj_x/sandboxes/sbx_x/exec";

/** Sandbox hosts under `sbx.test`, each answering with the id of the caller the gateway resolved. */
const ingressStandIn: IngressRouter = {
  parse: (host) => (host.endsWith(".sbx.test") ? { slug: host.slice(0, -".sbx.test".length) } : undefined),
  fetch: async (_request, target) => Response.json({ caller: target.principal?.id ?? null }),
  upgrade: (_req, socket) => socket.destroy(),
};

/**
 * Refused credentials are counted per address on every way in that takes them, not only on the
 * routes of the table: WebSocket upgrades (a sandbox's exec, a cluster's tunnel), plain requests
 * to a sandbox's ingress host and the agent runtime's API under /agent count each refusal toward the same budget (here 3 a minute), and
 * refuse an address that has spent it with the same 429 before any lookup.
 */
describe("refused credentials on upgrades and at /agent", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      rateLimit: 3,
      trustedProxies: "127.0.0.1",
      extraTargets: { sandbox: sandboxStandIn() },
      ingress: ingressStandIn,
    });
  });
  afterAll(() => h.close());

  const guess = (i: number) => `apl_${String(i).padStart(26, "0")}_${"x".repeat(43)}`;

  /** The status an upgrade was answered with (101 once open) and its Retry-After. */
  const upgrade = (client: string, token: string) =>
    new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
      const ws = new WebSocket(`${h.url.replace("http", "ws")}${EXEC_PATH}`, ["v5.channel.k8s.io"], {
        headers: { authorization: `Bearer ${token}`, "x-forwarded-for": client },
      });
      ws.once("open", () => {
        ws.close();
        resolve({ status: 101 });
      });
      ws.once("unexpected-response", (_req, res) => {
        const retryAfter = res.headers["retry-after"];
        resolve({ status: res.statusCode ?? 0, ...(typeof retryAfter === "string" ? { retryAfter } : {}) });
        res.resume();
      });
      ws.once("error", reject);
    });

  const agentApi = (client: string, token: string) =>
    fetch(`${h.url}/agent/api/agents/profile`, {
      headers: { authorization: `Bearer ${token}`, "x-forwarded-for": client },
    });

  it("counts refused tokens of WebSocket upgrades, then refuses the address's upgrades with 429", async () => {
    expect((await upgrade("198.51.100.1", h.ownerToken)).status).toBe(101);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await upgrade("198.51.100.1", guess(i))).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const blocked = await upgrade("198.51.100.1", guess(4));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
    // The valid token is not even looked up, and the address's ordinary routes are refused as well.
    expect((await upgrade("198.51.100.1", h.ownerToken)).status).toBe(429);
    const route = await fetch(`${h.url}/v1/orgs`, {
      headers: { authorization: `Bearer ${h.ownerToken}`, "x-forwarded-for": "198.51.100.1" },
    });
    expect(route.status).toBe(429);
    // Another address is not affected.
    expect((await upgrade("198.51.100.2", h.ownerToken)).status).toBe(101);
  });

  /** A plain request to a sandbox's ingress host (fetch sends no Host of its own choosing). */
  const ingressGet = (client: string, token?: string) =>
    new Promise<{ status: number; retryAfter?: string; type?: string; body: string }>((resolve, reject) => {
      const req = request(`${h.url}/`, {
        headers: {
          host: "app.sbx.test",
          "x-forwarded-for": client,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      });
      req.once("response", (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.once("end", () => {
          const retryAfter = res.headers["retry-after"];
          resolve({
            status: res.statusCode ?? 0,
            body,
            ...(typeof retryAfter === "string" ? { retryAfter } : {}),
            ...(res.headers["content-type"] ? { type: res.headers["content-type"] } : {}),
          });
        });
      });
      req.once("error", reject);
      req.end();
    });

  it("counts refused tokens at a sandbox's ingress host, then refuses the address there with 429", async () => {
    const caller = JSON.parse((await ingressGet("198.51.100.5", h.ownerToken)).body) as { caller: string | null };
    expect(caller.caller).not.toBeNull();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await ingressGet("198.51.100.5", guess(20 + i))).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    // The valid token is not even looked up: the same answer as on the other ways in.
    const blocked = await ingressGet("198.51.100.5", h.ownerToken);
    expect(blocked.status).toBe(429);
    expect(blocked.type).toContain("application/problem+json");
    expect(JSON.parse(blocked.body).type).toMatch(/\/rate-limited$/);
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
    expect((await agentApi("198.51.100.5", h.ownerToken)).status).toBe(429);
    // Without a token nothing is looked up or counted: the port decides whether it needs one.
    expect((await ingressGet("198.51.100.5")).status).toBe(200);
    expect((await ingressGet("198.51.100.6", h.ownerToken)).status).toBe(200);
  });

  it("counts refused tokens at the agent runtime's API, then refuses the address there with 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await agentApi("198.51.100.3", guess(i))).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const blocked = await agentApi("198.51.100.3", h.ownerToken);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("content-type")).toContain("application/problem+json");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Without a token nothing is looked up or counted: the 401 it always gets.
    expect(
      (await fetch(`${h.url}/agent/api/agents/profile`, { headers: { "x-forwarded-for": "198.51.100.3" } })).status,
    ).toBe(401);
  });

  it("shares one budget between the ways in", async () => {
    expect((await agentApi("198.51.100.4", guess(10))).status).toBe(401);
    expect((await upgrade("198.51.100.4", guess(11))).status).toBe(401);
    const route = await fetch(`${h.url}/v1/orgs`, {
      headers: { authorization: `Bearer ${guess(12)}`, "x-forwarded-for": "198.51.100.4" },
    });
    expect(route.status).toBe(401);
    expect((await agentApi("198.51.100.4", guess(13))).status).toBe(401);
    expect((await upgrade("198.51.100.4", h.ownerToken)).status).toBe(429);
    expect((await agentApi("198.51.100.4", h.ownerToken)).status).toBe(429);
  });
});
