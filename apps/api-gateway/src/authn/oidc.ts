import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";

/** Asymmetric algorithms only: `none` and HMAC (e.g. HS256 keyed with a public key) are refused. */
const ALLOWED_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
}

/** Verifies OIDC ID/access tokens against the issuer's discovery document and remote JWKS. */
export class OidcVerifier {
  readonly issuer: string;
  private readonly audience: string | undefined;
  private jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(options: { issuer: string; audience?: string | undefined }) {
    this.issuer = options.issuer.replace(/\/+$/, "");
    this.audience = options.audience;
  }

  private loadJwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (!this.jwks) {
      this.jwks = (async () => {
        const res = await fetch(`${this.issuer}/.well-known/openid-configuration`, {
          signal: AbortSignal.timeout(5000),
        });
        if (!res.ok) throw new Error(`OIDC discovery failed with ${res.status}`);
        const doc = (await res.json()) as DiscoveryDocument;
        if (doc.issuer.replace(/\/+$/, "") !== this.issuer) throw new Error("OIDC discovery issuer mismatch");
        return createRemoteJWKSet(new URL(doc.jwks_uri), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
      })();
      this.jwks.catch(() => {
        this.jwks = undefined;
      });
    }
    return this.jwks;
  }

  /** The verified claims; throws on any failure (signature, alg, iss, aud, exp, nbf, unknown kid). */
  async verify(token: string): Promise<JWTPayload & { sub: string }> {
    const jwks = await this.loadJwks();
    const { payload } = await jwtVerify(token, jwks, {
      issuer: [this.issuer, `${this.issuer}/`],
      algorithms: ALLOWED_ALGS,
      clockTolerance: 5,
      ...(this.audience ? { audience: this.audience } : {}),
    });
    if (typeof payload.sub !== "string" || payload.sub === "") throw new Error("token has no subject");
    return payload as JWTPayload & { sub: string };
  }
}
