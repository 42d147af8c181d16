import { createHash } from "node:crypto";
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, type JWTPayload, jwtVerify } from "jose";
import { type DelegatedKey, DelegationKeys } from "./delegation.ts";
import { type RelayAgreement, verifyMac } from "./mac.ts";
import { CLUSTER_ISSUER_PREFIX, CONTROL_PREFIX, MAX_REQUEST_JWT_LIFETIME_SECONDS, RELAY_AUDIENCE } from "./protocol.ts";
import { VerificationError } from "./verification-error.ts";

export { VerificationError };

const CLOCK_TOLERANCE_SECONDS = 5;
const EMPTY_BODY_HASH = createHash("sha256").update(new Uint8Array()).digest("base64url");

/**
 * Verifies the platform-signed JWT of every request down the tunnel against the project's JWKS
 * (refetched on an unknown `kid`, so a key rotation never breaks a live tunnel), and refuses
 * replays and any request whose method, path or body differ from what was signed. A request JWT
 * comes signed either by the project's key itself or by a key delegated to the tunnel, whose
 * certificate (signed by the project's key, verified against the same JWKS) travels beside it;
 * a delegated request JWT may also be MAC'd (HS256) with the key the relay agreed with that
 * certificate's `kex` key (docs/decisions/0008-tunnel-request-mac.md).
 */
export class RequestVerifier {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;
  private readonly seen = new Map<string, number>();
  private readonly issuer: string;
  private readonly clusterId: string;
  private readonly jwksUrl: URL;
  private readonly delegations: DelegationKeys;
  private readonly agreement: RelayAgreement | undefined;

  constructor(options: {
    baseUrl: string;
    projectId: string;
    clusterId: string;
    bearer: () => string;
    /** The relay's key-agreement key; without it MAC'd requests are refused. */
    agreement?: RelayAgreement;
  }) {
    this.agreement = options.agreement;
    this.issuer = `${CLUSTER_ISSUER_PREFIX}${options.projectId}`;
    this.clusterId = options.clusterId;
    this.jwksUrl = new URL(
      `/v1/projects/${encodeURIComponent(options.projectId)}/.well-known/jwks.json`,
      options.baseUrl,
    );
    const bearer = options.bearer;
    this.jwks = createRemoteJWKSet(this.jwksUrl, {
      cooldownDuration: 1000,
      cacheMaxAge: 10 * 60_000,
      // The JWKS route needs a token of the project: the relay's current one, read at each fetch.
      [customFetch]: (url, init) => {
        const headers = new Headers(init.headers);
        headers.set("authorization", `Bearer ${bearer()}`);
        return fetch(url, { ...init, headers });
      },
    });
    this.delegations = new DelegationKeys((token, audience) => this.verifyByProjectKey(token, audience));
  }

  /** A JWT signed by one of the project's published keys, for this cluster and this audience. */
  private async verifyByProjectKey(token: string, audience: string): Promise<JWTPayload> {
    const verify = async () =>
      (
        await jwtVerify(token, this.jwks, {
          issuer: this.issuer,
          audience,
          subject: this.clusterId,
          algorithms: ["ES256"],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ["jti", "iat", "exp"],
        })
      ).payload;
    try {
      return await verify();
    } catch (err) {
      // A key published since the last fetch, within jose's refetch cooldown: wait it out once
      // (refetches stay at most one a second, whatever a flood of unknown key ids asks for).
      if ((err as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY" || !this.jwks.coolingDown) {
        throw new VerificationError(`signature refused: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 1000));
      try {
        return await verify();
      } catch (again) {
        throw new VerificationError(`signature refused: ${(again as Error).message}`);
      }
    }
  }

  /** A request JWT signed by a delegated key: the certificate first, then the JWT with its key. */
  private async verifyDelegated(token: string, certificate: string): Promise<JWTPayload> {
    const delegated = await this.delegations.key(certificate);
    let payload: JWTPayload;
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch (err) {
      throw new VerificationError(`signature refused: ${(err as Error).message}`);
    }
    if (alg === "HS256") {
      payload = this.verifyMacd(token, delegated);
    } else {
      payload = await this.verifyWithDelegatedKey(token, delegated);
    }
    if (payload.exp! > delegated.expiresAt) throw new VerificationError("signature outlives its delegation");
    return payload;
  }

  /** An HS256 request JWT: the MAC with the key agreed with the certificate, then jose's claim checks. */
  private verifyMacd(token: string, delegated: DelegatedKey): JWTPayload {
    if (!this.agreement || !delegated.kex) {
      throw new VerificationError("signature refused: no MAC key is agreed for this delegation");
    }
    delegated.mac ??= this.agreement.macKey(delegated.kex, this.clusterId);
    const payload = verifyMac(token, delegated.mac);
    const now = Math.floor(Date.now() / 1000);
    const aud = payload.aud;
    const fail = (why: string) => new VerificationError(`signature refused: ${why}`);
    if (payload.iss !== this.issuer) throw fail('unexpected "iss" claim value');
    if (payload.sub !== this.clusterId) throw fail('unexpected "sub" claim value');
    if (!(aud === RELAY_AUDIENCE || (Array.isArray(aud) && aud.includes(RELAY_AUDIENCE)))) {
      throw fail('unexpected "aud" claim value');
    }
    if (typeof payload.jti !== "string" || typeof payload.iat !== "number" || typeof payload.exp !== "number") {
      throw fail('missing required "jti", "iat" or "exp" claim');
    }
    if (payload.exp <= now - CLOCK_TOLERANCE_SECONDS) throw fail('"exp" claim timestamp check failed');
    if (payload.nbf !== undefined && (typeof payload.nbf !== "number" || payload.nbf > now + CLOCK_TOLERANCE_SECONDS)) {
      throw fail('"nbf" claim timestamp check failed');
    }
    return payload;
  }

  private async verifyWithDelegatedKey(token: string, delegated: DelegatedKey): Promise<JWTPayload> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, delegated.key, {
        issuer: this.issuer,
        audience: RELAY_AUDIENCE,
        subject: this.clusterId,
        algorithms: ["ES256"],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ["jti", "iat", "exp"],
      }));
    } catch (err) {
      throw new VerificationError(`signature refused: ${(err as Error).message}`);
    }
    return payload;
  }

  async verify(args: {
    token: string | undefined;
    /** The certificate of the key that signed `token`, when it is a delegated one. */
    delegation?: string | undefined;
    method: string;
    path: string;
    body: Uint8Array;
  }): Promise<JWTPayload> {
    if (!args.token) throw new VerificationError("the request carries no signature");
    const payload = args.delegation
      ? await this.verifyDelegated(args.token, args.delegation)
      : await this.verifyByProjectKey(args.token, RELAY_AUDIENCE);
    if (payload.exp! - payload.iat! > MAX_REQUEST_JWT_LIFETIME_SECONDS) {
      throw new VerificationError("signature lives longer than 60 s");
    }
    const control = args.path.startsWith(CONTROL_PREFIX);
    if (payload.use !== (control ? "control" : "kube")) throw new VerificationError("signed for another use");
    if (payload.htm !== args.method.toUpperCase()) throw new VerificationError("method differs from the signed one");
    if (payload.htu !== args.path) throw new VerificationError("path differs from the signed one");
    const hash = args.body.length === 0 ? EMPTY_BODY_HASH : createHash("sha256").update(args.body).digest("base64url");
    if (payload.bh !== hash) throw new VerificationError("body differs from the signed one");
    const jti = String(payload.jti);
    const now = Date.now();
    if (this.seen.has(jti)) throw new VerificationError("replayed request");
    this.seen.set(jti, payload.exp! * 1000 + 5000);
    if (this.seen.size > 1000) {
      for (const [id, until] of this.seen) if (until < now) this.seen.delete(id);
    }
    return payload;
  }
}
