import type { IncomingMessage } from "node:http";
import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { ConfigError } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClientAddresses, parseTrustedProxies } from "../src/client-address.ts";
import { configFromEnv } from "../src/config.ts";
import { type Harness, startHarness } from "./harness.ts";

const from = (peer: string, forwardedFor?: string | string[]) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
  }) as unknown as IncomingMessage;

describe("the client's address", () => {
  const behindLb = new ClientAddresses(parseTrustedProxies("10.0.0.0/8, 127.0.0.1, fd00::/8"));

  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(new ClientAddresses(undefined).of(from("127.0.0.1", "203.0.113.9"))).toBe("127.0.0.1");
  });

  it("is the nearest untrusted hop of X-Forwarded-For behind trusted proxies, read from the right", () => {
    expect(behindLb.of(from("10.1.2.3", "203.0.113.9"))).toBe("203.0.113.9");
    // A client naming itself first gains nothing: the proxy appended the address it really came from.
    expect(behindLb.of(from("10.1.2.3", "198.51.100.1, 203.0.113.9, 10.9.9.9"))).toBe("203.0.113.9");
    expect(behindLb.of(from("::ffff:127.0.0.1", ["198.51.100.1", "203.0.113.9"]))).toBe("203.0.113.9");
    expect(behindLb.of(from("fd00::1", "2001:db8::7"))).toBe("2001:db8::7");
  });

  it("ignores X-Forwarded-For from a peer that is not trusted, and stops at a hop that is no address", () => {
    expect(behindLb.of(from("192.0.2.50", "203.0.113.9"))).toBe("192.0.2.50");
    expect(behindLb.of(from("10.1.2.3", "203.0.113.9, not-an-address"))).toBe("10.1.2.3");
    expect(behindLb.of(from("10.1.2.3"))).toBe("10.1.2.3");
    // Every hop trusted: the farthest one.
    expect(behindLb.of(from("10.1.2.3", "10.0.0.7"))).toBe("10.0.0.7");
  });

  it("TRUSTED_PROXIES that is not addresses or ranges stops the start, naming the variable and the entry", () => {
    for (const bad of ["10.0.0.0/33", "proxy.internal", "10.0.0.1/8/2", "fd00::/129"]) {
      let error: unknown;
      try {
        configFromEnv({ TRUSTED_PROXIES: bad });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain("TRUSTED_PROXIES");
      expect((error as ConfigError).message).toContain(bad);
    }
    expect(configFromEnv({ TRUSTED_PROXIES: "10.0.0.0/8,::1" }).trustedProxies).toBe("10.0.0.0/8,::1");
  });
});

describe("per-address limits and audit records behind a trusted proxy", () => {
  let trusting: Harness;
  let direct: Harness;
  const audits: AuditRecorded[] = [];
  beforeAll(async () => {
    trusting = await startHarness({ rateLimit: 2, trustedProxies: "127.0.0.1" });
    direct = await startHarness({ rateLimit: 2 });
    await trusting.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void audits.push(e.data));
  });
  afterAll(async () => {
    await trusting?.close();
    await direct?.close();
  });

  // Webhook senders carry no token: their limit is per address (no runtime is connected: 503).
  const deliver = (h: Harness, client: string) =>
    fetch(`${h.url}/agent/webhooks/github`, {
      method: "POST",
      headers: { "x-forwarded-for": client },
      body: "{}",
    }).then((r) => r.status);

  it("limits each client behind the proxy on its own, and records its address", async () => {
    expect(await deliver(trusting, "203.0.113.1")).toBe(503);
    expect(await deliver(trusting, "203.0.113.1")).toBe(503);
    expect(await deliver(trusting, "203.0.113.1")).toBe(429);
    expect(await deliver(trusting, "203.0.113.2")).toBe(503);
    await expect.poll(() => audits.filter((a) => a.ip === "203.0.113.1").length).toBe(3);
  });

  it("limits an IPv6 client by its /64, so a fresh address of the same network gets no fresh budget", async () => {
    expect(await deliver(trusting, "2001:db8:7:1::1")).toBe(503);
    expect(await deliver(trusting, "2001:db8:7:1::2")).toBe(503);
    expect(await deliver(trusting, "2001:db8:7:1:ffff::3")).toBe(429);
    expect(await deliver(trusting, "2001:db8:7:2::1")).toBe(503);
  });

  it("without TRUSTED_PROXIES, a sender cannot escape its limit by naming another address", async () => {
    expect(await deliver(direct, "203.0.113.1")).toBe(503);
    expect(await deliver(direct, "203.0.113.2")).toBe(503);
    expect(await deliver(direct, "203.0.113.3")).toBe(429);
  });
});
