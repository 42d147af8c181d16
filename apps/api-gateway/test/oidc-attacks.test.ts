import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OidcVerifier } from "../src/authn/oidc.ts";

/** A local identity provider: discovery document + JWKS with keys made in the test. */
let idp: LocalServer;
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
let publicJwk: JWK;
let issuer: string;
const AUDIENCE = "agentplane";

beforeAll(async () => {
  const pair = await generateKeyPair("RS256", { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  idp = await startLocalServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url === "/.well-known/openid-configuration") {
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    } else if (req.url === "/jwks") {
      res.end(JSON.stringify({ keys: [publicJwk] }));
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  issuer = idp.url;
});
afterAll(() => idp.close());

function token(overrides: { iss?: string; aud?: string; exp?: number; nbf?: number; kid?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: "ada@example.com", name: "Ada" })
    .setProtectedHeader({ alg: "RS256", kid: overrides.kid ?? "k1" })
    .setIssuer(overrides.iss ?? issuer)
    .setAudience(overrides.aud ?? AUDIENCE)
    .setSubject("user-123")
    .setIssuedAt(now)
    .setNotBefore(overrides.nbf ?? now - 10)
    .setExpirationTime(overrides.exp ?? now + 300)
    .sign(privateKey);
}

function b64(obj: unknown): string {
  return Buffer.from(JSON.stringify(obj)).toString("base64url");
}

describe("OIDC verification", () => {
  const verifier = () => new OidcVerifier({ issuer, audience: AUDIENCE });

  it("accepts a token signed by the issuer's key with the right audience", async () => {
    const claims = await verifier().verify(await token());
    expect(claims.sub).toBe("user-123");
    expect(claims.email).toBe("ada@example.com");
  });

  it("refuses alg none", async () => {
    const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64({ iss: issuer, aud: AUDIENCE, sub: "x", exp: 9e9 })}.`;
    await expect(verifier().verify(unsigned)).rejects.toThrow();
  });

  it("refuses HS256 signed with the public key as the secret", async () => {
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256", kid: "k1" })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setSubject("attacker")
      .setExpirationTime("5m")
      .sign(secret);
    await expect(verifier().verify(forged)).rejects.toThrow();
  });

  it("refuses a wrong issuer, a wrong audience, an expired or not-yet-valid token, an unknown kid", async () => {
    const now = Math.floor(Date.now() / 1000);
    const v = verifier();
    await expect(v.verify(await token({ iss: "https://evil.example" }))).rejects.toThrow();
    await expect(v.verify(await token({ aud: "someone-else" }))).rejects.toThrow();
    await expect(v.verify(await token({ exp: now - 60 }))).rejects.toThrow();
    await expect(v.verify(await token({ nbf: now + 600 }))).rejects.toThrow();
    await expect(v.verify(await token({ kid: "unknown" }))).rejects.toThrow();
  });

  it("refuses a token signed by another key that claims the issuer's kid", async () => {
    const other = await generateKeyPair("RS256");
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setSubject("attacker")
      .setExpirationTime("5m")
      .sign(other.privateKey);
    await expect(verifier().verify(forged)).rejects.toThrow();
  });
});
