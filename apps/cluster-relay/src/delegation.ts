import type { KeyObject } from "node:crypto";
import { type CryptoKey, importJWK, type JWTPayload } from "jose";
import { type AgreementPublicKey, agreementKeyOf } from "./mac.ts";
import { DELEGATION_AUDIENCE, MAX_DELEGATION_LIFETIME_SECONDS } from "./protocol.ts";
import { VerificationError } from "./verification-error.ts";

/** A delegated request-signing key, and when its certificate expires (seconds since the epoch). */
export interface DelegatedKey {
  key: CryptoKey;
  expiresAt: number;
  /** The platform's key-agreement key the certificate names (`kex`), when it names one (0008). */
  kex?: AgreementPublicKey | undefined;
  /** The MAC key agreed with `kex`, made on the first MAC'd request. */
  mac?: KeyObject;
}

/** Certificates kept at once (one per live platform tunnel signer, renewed every 5 minutes). */
const MAX_CERTIFICATES = 64;

/**
 * The keys the platform signs requests with, from their certificates: JWTs signed by the
 * project's key (verified against its JWKS like any request JWT) whose audience is the relay's
 * delegation audience, whose subject is this cluster and whose `cnf.jwk` is the delegated public
 * key (EC P-256). A verified certificate is kept until it expires, so a request costs one
 * signature check with the delegated key; a refused one is never kept.
 */
export class DelegationKeys {
  private readonly verified = new Map<string, { key: Promise<DelegatedKey>; expiresAt?: number }>();
  private readonly verifyByProjectKey: (token: string, audience: string) => Promise<JWTPayload>;

  /** `verifyByProjectKey`: a JWT of this cluster signed by the project's key, for an audience. */
  constructor(verifyByProjectKey: (token: string, audience: string) => Promise<JWTPayload>) {
    this.verifyByProjectKey = verifyByProjectKey;
  }

  async key(certificate: string): Promise<DelegatedKey> {
    const now = Date.now() / 1000;
    let entry = this.verified.get(certificate);
    if (!entry) {
      this.makeRoom(now);
      const created: { key: Promise<DelegatedKey>; expiresAt?: number } = { key: this.verify(certificate) };
      created.key.then(
        (k) => {
          created.expiresAt = k.expiresAt;
        },
        () => this.verified.delete(certificate),
      );
      this.verified.set(certificate, created);
      entry = created;
    }
    const key = await entry.key;
    if (key.expiresAt < now) {
      this.verified.delete(certificate);
      throw new VerificationError("delegation expired");
    }
    return key;
  }

  private makeRoom(now: number): void {
    if (this.verified.size < MAX_CERTIFICATES) return;
    for (const [cert, entry] of this.verified) {
      if (entry.expiresAt !== undefined && entry.expiresAt < now) this.verified.delete(cert);
    }
    // Still full: the oldest goes (a Map iterates in insertion order).
    const oldest = this.verified.keys().next().value;
    if (oldest !== undefined && this.verified.size >= MAX_CERTIFICATES) this.verified.delete(oldest);
  }

  private async verify(certificate: string): Promise<DelegatedKey> {
    let payload: JWTPayload;
    try {
      payload = await this.verifyByProjectKey(certificate, DELEGATION_AUDIENCE);
    } catch (err) {
      throw new VerificationError(`delegation refused: ${(err as Error).message.replace(/^signature refused: /, "")}`);
    }
    if (payload.exp! - payload.iat! > MAX_DELEGATION_LIFETIME_SECONDS) {
      throw new VerificationError("delegation lives longer than an hour");
    }
    const jwk = (payload.cnf as { jwk?: Record<string, unknown> } | undefined)?.jwk;
    if (jwk?.kty !== "EC" || jwk.crv !== "P-256" || "d" in jwk) {
      throw new VerificationError("delegation names no EC P-256 public key");
    }
    try {
      const key = await importJWK({ kty: "EC", crv: "P-256", x: String(jwk.x), y: String(jwk.y) }, "ES256");
      return { key: key as CryptoKey, expiresAt: payload.exp!, kex: agreementKeyOf(payload.kex) };
    } catch {
      throw new VerificationError("delegation names no usable key");
    }
  }
}
