import { INTERNAL_IDENTITY_HEADER, type Principal } from "@agentplane/contracts";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createServiceApp, generateInternalKeys, parseEnv, requirePrincipal, signIdentity } from "../src/index.ts";

const alice: Principal = { type: "user", id: "usr_alice", displayName: "Alice" };

async function setup() {
  const keys = await generateInternalKeys();
  const app = createServiceApp({ name: "tenancy", keys });
  app.get("/whoami", (c) => c.json(requirePrincipal(c)));
  app.post("/echo", async (c) => c.json({ size: (await c.req.text()).length }));
  return { keys, app };
}

describe("service app", () => {
  it("sets the principal from a valid internal identity for its own audience", async () => {
    const { keys, app } = await setup();
    const token = await signIdentity(keys, alice, { audience: "tenancy" });
    const res = await app.request("/whoami", { headers: { [INTERNAL_IDENTITY_HEADER]: token } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(alice);
  });

  it("refuses an identity for another service, one signed by another key, and none at all", async () => {
    const { keys, app } = await setup();
    const other = await generateInternalKeys();
    const cases = [
      await signIdentity(keys, alice, { audience: "sandbox" }),
      await signIdentity(other, alice, { audience: "tenancy" }),
    ];
    for (const token of cases) {
      const res = await app.request("/whoami", { headers: { [INTERNAL_IDENTITY_HEADER]: token } });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await app.request("/whoami")).status).toBe(401);
  });

  it("answers 413 for a body over 1 MiB and 404 problem for unknown routes", async () => {
    const { app } = await setup();
    const big = await app.request("/echo", { method: "POST", body: "x".repeat(1024 * 1024 + 1) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { type: string }).type).toMatch(/payload-too-large$/);
    const small = await app.request("/echo", { method: "POST", body: "x".repeat(1000) });
    expect(await small.json()).toEqual({ size: 1000 });
    const missing = await app.request("/nope");
    expect(missing.status).toBe(404);
  });
});

describe("parseEnv", () => {
  it("names every bad variable and treats empty strings as unset", () => {
    const schema = z.object({ PORT: z.coerce.number().int(), NAME: z.string().default("x"), URL: z.url() });
    expect(() => parseEnv(schema, { PORT: "abc", URL: "" })).toThrow(/PORT.*URL|URL.*PORT/);
    expect(parseEnv(schema, { PORT: "80", URL: "http://a", NAME: "" })).toEqual({
      PORT: 80,
      NAME: "x",
      URL: "http://a",
    });
  });
});

describe("identity signer and verifier caches", () => {
  it("reuses a signed token per principal and audience, and a verified token keeps verifying until it expires", async () => {
    const { IdentitySigner, IdentityVerifier } = await import("../src/index.ts");
    const keys = await generateInternalKeys();
    const signer = new IdentitySigner(keys, { ttlSeconds: 2 });
    const a1 = await signer.sign(alice, "tenancy");
    expect(await signer.sign(alice, "tenancy")).toBe(a1);
    expect(await signer.sign(alice, "sandbox")).not.toBe(a1);
    expect(await signer.sign({ ...alice, id: "usr_bob" }, "tenancy")).not.toBe(a1);
    // Another object with the same content finds the same token; after it, the same object
    // finds it too, for each audience on its own.
    const copy = { ...alice };
    expect(await signer.sign(copy, "tenancy")).toBe(a1);
    expect(await signer.sign(copy, "tenancy")).toBe(a1);
    expect(await signer.sign(copy, "sandbox")).toBe(await signer.sign(alice, "sandbox"));
    const verifier = new IdentityVerifier(keys, "tenancy");
    expect((await verifier.verify(a1)).principal).toEqual(alice);
    await expect(new IdentityVerifier(keys, "sandbox").verify(a1)).rejects.toThrow();
    // After half its lifetime the signer renews; after its lifetime the old token is refused.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 1100);
      expect(await signer.sign(alice, "tenancy")).not.toBe(a1);
      vi.setSystemTime(Date.now() + 1500);
      await expect(verifier.verify(a1)).rejects.toThrow();
    } finally {
      vi.useRealTimers();
    }
  });
});
