import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { type RunningServer, serveFetch } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressLimitKey } from "../src/rate-limit.ts";
import { type Harness, startHarness } from "./harness.ts";

/**
 * A gateway listening on `::` (HOST=::, a dual-stack socket) sees its IPv4 clients as IPv4-mapped
 * IPv6 addresses (`::ffff:203.0.113.7`). Each is still one IPv4 client: counted on its own, never
 * in the /64 that an IPv6 client is counted by (where every IPv4 client of the world would share
 * one budget, and one of them spending it would shut out all the others).
 */
describe("IPv4 clients of a dual-stack listener", () => {
  let h: Harness;
  let dual: RunningServer;
  let port: number;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    h = await startHarness({ rateLimit: 3 });
    dual = await serveFetch((req, env) => h.gateway.fetch(req, env), { port: 0, hostname: "::" });
    port = (dual.server.address() as AddressInfo).port;
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(async () => {
    await dual?.close();
    await h?.close();
  });

  /** A GET of /v1/orgs with `token`, sent from the loopback address `from` (any of 127.0.0.0/8). */
  const send = (from: string, token: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          localAddress: from,
          path: "/v1/orgs",
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end();
    });
  const guess = (i: number) => `apl_${String(i).padStart(26, "0")}_${"x".repeat(43)}`;

  it("counts each IPv4 client on its own: one spending its budget of refusals shuts out no other", async () => {
    for (let i = 0; i < 4; i++) await send("127.0.0.2", guess(i));
    expect(await send("127.0.0.2", h.ownerToken)).toBe(429);
    expect(await send("127.0.0.3", h.ownerToken)).toBe(200);
  });

  it("records the client's IPv4 address", async () => {
    await expect.poll(() => audits.some((a) => a.status === 401)).toBe(true);
    expect(audits.filter((a) => a.status === 401).map((a) => a.ip)).toContain("127.0.0.2");
  });

  it("keys an IPv4-mapped address as the IPv4 address it is, an IPv6 one by its /64", () => {
    expect(addressLimitKey("::ffff:198.51.100.1")).toBe(addressLimitKey("198.51.100.1"));
    expect(addressLimitKey("::ffff:198.51.100.1")).not.toBe(addressLimitKey("::ffff:198.51.100.2"));
    expect(addressLimitKey("2001:db8:7:1::1")).toBe(addressLimitKey("2001:db8:7:1::2"));
  });
});
