import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { type CryptoKey, decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, jwtVerify, SignJWT } from "jose";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { ProjectSigner } from "../src/services/project-signer.ts";
import { DELEGATION_AUDIENCE, RELAY_AUDIENCE, requestClaims } from "../src/tunnel/protocol.ts";
import { TunnelRequestSigner } from "../src/tunnel/request-signer.ts";
import { thumbprint, tunnelMacKey } from "../src/tunnel/tunnel-mac.ts";

/**
 * Tenancy's signing endpoint as the tunnel signer sees it: ES256 with a project key, `iss` the
 * project's cluster issuer, on the test's clock; `lifetime` overrides the asked lifetime, `fail`
 * makes it refuse.
 */
function projectKeySigner(clock: { now: number }, projectKey: CryptoKey) {
  const calls: { audience: string; ttl: number }[] = [];
  const state = { lifetime: undefined as number | undefined, fail: false };
  const signer: ProjectSigner = {
    async sign(projectId, claims, ttlSeconds) {
      calls.push({ audience: claims.aud, ttl: ttlSeconds });
      if (state.fail) throw new Error("tenancy unavailable");
      const { sub, aud, ...rest } = claims;
      const iat = Math.floor(clock.now / 1000);
      return new SignJWT(rest)
        .setProtectedHeader({ alg: "ES256", kid: "project-key-1" })
        .setIssuer(`agentplane:project:${projectId}`)
        .setSubject(sub)
        .setAudience(aud)
        .setIssuedAt(iat)
        .setExpirationTime(iat + (state.lifetime ?? ttlSeconds))
        .sign(projectKey);
    },
  };
  return { signer, calls, state };
}

const claims = () =>
  requestClaims({ clusterId: "cls_1", method: "GET", path: "/api/v1/pods", body: undefined, use: "kube" });

describe("a tunnel's request signer (delegated key certified by the project key)", () => {
  let projectKey: { privateKey: CryptoKey; publicKey: CryptoKey };
  beforeAll(async () => {
    projectKey = await generateKeyPair("ES256");
  });
  const setUp = () => {
    const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
    const tenancy = projectKeySigner(clock, projectKey.privateKey);
    const signer = new TunnelRequestSigner({
      signer: tenancy.signer,
      projectId: "prj_1",
      clusterId: "cls_1",
      now: () => clock.now,
    });
    return { clock, tenancy, signer };
  };

  it("asks tenancy once for a certificate; each request JWT verifies with the certified key, for 60 s", async () => {
    const { clock, tenancy, signer } = setUp();
    const [a, b] = await Promise.all([signer.sign(claims()), signer.sign(claims())]);
    expect(tenancy.calls).toEqual([{ audience: DELEGATION_AUDIENCE, ttl: 600 }]);
    expect(a!.delegation).toBe(b!.delegation);
    const certificate = await jwtVerify(a!.delegation, projectKey.publicKey, {
      audience: DELEGATION_AUDIENCE,
      subject: "cls_1",
      currentDate: new Date(clock.now),
    });
    const jwk = (certificate.payload.cnf as { jwk: { kid: string; d?: string } }).jwk;
    expect(jwk.d).toBeUndefined();
    expect(decodeProtectedHeader(a!.jwt).kid).toBe(jwk.kid);
    const request = await jwtVerify(a!.jwt, await importJWK(jwk, "ES256"), {
      issuer: "agentplane:project:prj_1",
      audience: RELAY_AUDIENCE,
      subject: "cls_1",
      currentDate: new Date(clock.now),
    });
    expect(request.payload).toMatchObject({ htm: "GET", htu: "/api/v1/pods", use: "kube" });
    expect(request.payload.exp! - request.payload.iat!).toBe(60);
    expect(decodeJwt(b!.jwt).jti).not.toBe(request.payload.jti);
    // The project key itself cannot verify a request JWT: only the certificate's key does.
    await expect(jwtVerify(a!.jwt, projectKey.publicKey, { currentDate: new Date(clock.now) })).rejects.toThrow();
  });

  it("renews in the background past half the certificate's life, and never signs past its expiry", async () => {
    const { clock, tenancy, signer } = setUp();
    const first = await signer.sign(claims());
    clock.now += 301_000;
    // Past half its life: this request still uses the current key while a renewal is asked.
    const during = await signer.sign(claims());
    expect(during.delegation).toBe(first.delegation);
    expect(tenancy.calls).toHaveLength(2);
    let renewed = during;
    await vi.waitFor(async () => {
      renewed = await signer.sign(claims());
      expect(renewed.delegation).not.toBe(first.delegation);
    });
    expect(tenancy.calls).toHaveLength(2);

    // Tenancy down, the certificate within 60 s of its end: no request is signed with it.
    tenancy.state.fail = true;
    clock.now += 600_000 - 30_000;
    await expect(signer.sign(claims())).rejects.toThrow(/tenancy unavailable/);
    tenancy.state.fail = false;
    const back = await signer.sign(claims());
    expect(back.delegation).not.toBe(renewed.delegation);

    // A certificate shorter than a request's 60 s: the request expires with it.
    tenancy.state.lifetime = 20;
    clock.now += 600_000;
    const short = await signer.sign(claims());
    expect(decodeJwt(short.jwt).exp).toBe(decodeJwt(short.delegation).exp);
  });
});

describe("a tunnel's request signer once the relay names its key-agreement key (MAC'd requests)", () => {
  const relayPair = () => {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = pair.publicKey.export({ format: "jwk" });
    return { privateKey: pair.privateKey, jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } };
  };
  /** The key the relay derives: its private key with the certificate's `kex`. */
  const relaySideKey = (relay: ReturnType<typeof relayPair>, certificate: string) => {
    const kex = decodeJwt(certificate).kex as { kty: string; crv: string; x: string; y: string; kid: string };
    return tunnelMacKey({
      privateKey: relay.privateKey,
      publicKey: createPublicKey({ key: { kty: kex.kty, crv: kex.crv, x: kex.x, y: kex.y }, format: "jwk" }),
      clusterId: "cls_1",
      platformKid: kex.kid,
      relayKid: thumbprint(relay.jwk),
    });
  };
  const macOk = (jwt: string, key: KeyObject) => {
    const [h, p, s] = jwt.split(".") as [string, string, string];
    return createHmac("sha256", key).update(`${h}.${p}`).digest("base64url") === s;
  };

  /** A tunnel signer for prj_1/cls_1 certified by a fresh project key, on a clock the test moves. */
  const tunnelSigner = async () => {
    const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
    const tenancy = projectKeySigner(clock, (await generateKeyPair("ES256")).privateKey);
    const signer = new TunnelRequestSigner({
      signer: tenancy.signer,
      projectId: "prj_1",
      clusterId: "cls_1",
      now: () => clock.now,
    });
    return { clock, signer };
  };

  it("signs with ES256 until then; after, MACs with the key only that relay derives, per certificate", async () => {
    const { clock, signer } = await tunnelSigner();
    const before = await signer.sign(claims());
    expect(decodeProtectedHeader(before.jwt).alg).toBe("ES256");
    const kex = decodeJwt(before.delegation).kex as Record<string, unknown>;
    expect(kex).toMatchObject({ kty: "EC", crv: "P-256" });
    expect(kex.d).toBeUndefined();

    const relay = relayPair();
    signer.acceptRelayKey(relay.jwk);
    const after = await signer.sign(claims());
    expect(after.delegation).toBe(before.delegation);
    expect(decodeProtectedHeader(after.jwt)).toMatchObject({
      alg: "HS256",
      kid: decodeProtectedHeader(before.jwt).kid,
    });
    expect(decodeJwt(after.jwt)).toMatchObject({ iss: "agentplane:project:prj_1", sub: "cls_1", htu: "/api/v1/pods" });
    expect(macOk(after.jwt, relaySideKey(relay, after.delegation))).toBe(true);
    // Another relay's key (a hijacker's, say) derives another key.
    expect(macOk(after.jwt, relaySideKey(relayPair(), after.delegation))).toBe(false);

    // A renewed certificate names a new `kex`: a new key, still the relay's to derive.
    clock.now += 600_000;
    const renewed = await signer.sign(claims());
    expect(renewed.delegation).not.toBe(after.delegation);
    expect(macOk(renewed.jwt, relaySideKey(relay, renewed.delegation))).toBe(true);
    expect(macOk(renewed.jwt, relaySideKey(relay, after.delegation))).toBe(false);
  });

  it("refuses a relay key that is private, of another curve or off the curve, and keeps signing", async () => {
    const { signer } = await tunnelSigner();
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ format: "jwk" });
    const good = pair.publicKey.export({ format: "jwk" });
    for (const bad of [
      pair.privateKey.export({ format: "jwk" }),
      p384,
      { ...good, y: good.x },
      { kty: "oct", k: "c2VjcmV0" },
      "not a key",
    ]) {
      expect(() => signer.acceptRelayKey(bad)).toThrow();
    }
    expect(decodeProtectedHeader((await signer.sign(claims())).jwt).alg).toBe("ES256");
  });
});
