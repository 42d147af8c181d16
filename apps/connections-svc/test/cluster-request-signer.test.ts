import { type CryptoKey, decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, jwtVerify, SignJWT } from "jose";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { ProjectSigner } from "../src/services/project-signer.ts";
import { DELEGATION_AUDIENCE, RELAY_AUDIENCE, requestClaims } from "../src/tunnel/protocol.ts";
import { TunnelRequestSigner } from "../src/tunnel/request-signer.ts";

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
