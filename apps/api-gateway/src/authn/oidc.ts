import type { OidcEmailTrust } from "@agentplane/service-kit";
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";

/** Asymmetric algorithms only: `none` and HMAC (e.g. HS256 keyed with a public key) are refused. */
const ALLOWED_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

/** How far a token's `iat` may be ahead of our clock (clocks drift); beyond it the token is refused. */
export const DEFAULT_MAX_CLOCK_SKEW_SECONDS = 60;

interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
}

/** The identity provider (discovery document or key set) cannot be reached: not the token's fault. */
export class OidcUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OidcUnavailableError";
  }
}

/**
 * jose codes that mean the key set could not be fetched or read, as opposed to a token that fails
 * verification. A plain `TypeError` (fetch failed: refused, DNS) has no code.
 */
const PROVIDER_FAILURE_CODES = new Set(["ERR_JWKS_TIMEOUT", "ERR_JOSE_GENERIC", "ERR_JWKS_INVALID"]);

/** Refuses a token issued in the future beyond `maxSkewSeconds` (a forged or misissued token). */
export function assertIssuedInPast(payload: JWTPayload, maxSkewSeconds: number, now = Date.now()): void {
  if (payload.iat === undefined) return;
  if (typeof payload.iat !== "number" || payload.iat > now / 1000 + maxSkewSeconds) {
    throw new Error('"iat" claim is in the future');
  }
}

/** Verifies OIDC ID/access tokens against the issuer's discovery document and remote JWKS. */
export class OidcVerifier {
  readonly issuer: string;
  private readonly audience: string | undefined;
  private readonly maxClockSkewSeconds: number;
  /** Which email of this issuer's tokens is taken as the user's address (OIDC_EMAIL_TRUST). */
  readonly emailTrust: OidcEmailTrust;
  private jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(options: {
    issuer: string;
    audience?: string | undefined;
    maxClockSkewSeconds?: number | undefined;
    emailTrust?: OidcEmailTrust | undefined;
  }) {
    this.issuer = options.issuer.replace(/\/+$/, "");
    this.audience = options.audience;
    this.maxClockSkewSeconds = options.maxClockSkewSeconds ?? DEFAULT_MAX_CLOCK_SKEW_SECONDS;
    this.emailTrust = options.emailTrust ?? "verified";
  }

  private loadJwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (!this.jwks) {
      this.jwks = (async () => {
        let doc: DiscoveryDocument;
        try {
          const res = await fetch(`${this.issuer}/.well-known/openid-configuration`, {
            signal: AbortSignal.timeout(5000),
          });
          if (!res.ok) throw new Error(`OIDC discovery failed with ${res.status}`);
          doc = (await res.json()) as DiscoveryDocument;
        } catch (err) {
          throw new OidcUnavailableError(`OIDC discovery failed: ${(err as Error).message}`, { cause: err });
        }
        if (doc.issuer.replace(/\/+$/, "") !== this.issuer) throw new Error("OIDC discovery issuer mismatch");
        return createRemoteJWKSet(new URL(doc.jwks_uri), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
      })();
      this.jwks.catch(() => {
        this.jwks = undefined;
      });
    }
    return this.jwks;
  }

  /**
   * The verified claims; throws on any failure (signature, alg, iss, aud, exp, nbf, `iat` in the
   * future, unknown kid), and `OidcUnavailableError` when the provider cannot be reached.
   */
  async verify(token: string): Promise<JWTPayload & { sub: string }> {
    const jwks = await this.loadJwks();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: [this.issuer, `${this.issuer}/`],
        algorithms: ALLOWED_ALGS,
        clockTolerance: 5,
        ...(this.audience ? { audience: this.audience } : {}),
      }));
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code !== "string" || PROVIDER_FAILURE_CODES.has(code)) {
        throw new OidcUnavailableError(`OIDC key set unavailable: ${(err as Error).message}`, { cause: err });
      }
      throw err;
    }
    assertIssuedInPast(payload, this.maxClockSkewSeconds);
    if (typeof payload.sub !== "string" || payload.sub === "") throw new Error("token has no subject");
    return payload as JWTPayload & { sub: string };
  }
}
