import { createHash, generateKeyPairSync, type JsonWebKey, type KeyObject, randomUUID, sign } from "node:crypto";
import { clusterJwtIssuer } from "@agentplane/contracts";
import { decodeJwt } from "jose";
import type { ProjectSigner } from "../services/project-signer.ts";
import {
  DELEGATION_AUDIENCE,
  DELEGATION_TTL_SECONDS,
  REQUEST_JWT_TTL_SECONDS,
  type requestClaims,
} from "./protocol.ts";

/** What a request down a tunnel carries: its JWT and the certificate of the key that signed it. */
export interface SignedRequest {
  jwt: string;
  delegation: string;
}

interface Delegation {
  privateKey: KeyObject;
  /** The encoded protected header of every JWT this key signs (`alg`, `typ`, `kid`). */
  header: string;
  certificate: string;
  /** Milliseconds: the certificate's `exp`, and when a renewal starts (half its life). */
  expiresAt: number;
  renewAt: number;
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

/** RFC 7638 thumbprint of an EC public key: its `kid`. */
function thumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash("sha256").update(canonical).digest("base64url");
}

/**
 * Signs the per-request JWTs of one tunnel (docs/decisions/0007-delegated-request-signing.md).
 * Tenancy certifies a key pair made here, per tunnel: the certificate is a JWT signed with the
 * project's current key naming the cluster and the public key (`cnf.jwk`), valid 10 minutes and
 * renewed at half. Each request is then signed here with the private key (ES256, the same claims:
 * method, path, body hash, `jti`, ≤ 60 s, never past the certificate), without a round trip to
 * tenancy. The private key never leaves this process and dies with the tunnel.
 */
export class TunnelRequestSigner {
  private readonly signer: ProjectSigner;
  private readonly projectId: string;
  private readonly clusterId: string;
  private readonly issuer: string;
  private readonly now: () => number;
  private current: Delegation | undefined;
  private pending: Promise<Delegation> | undefined;

  constructor(args: { signer: ProjectSigner; projectId: string; clusterId: string; now?: () => number }) {
    this.signer = args.signer;
    this.projectId = args.projectId;
    this.clusterId = args.clusterId;
    this.issuer = clusterJwtIssuer(args.projectId);
    this.now = args.now ?? Date.now;
  }

  /** Signs one request's claims (from `requestClaims`). */
  async sign(claims: ReturnType<typeof requestClaims>): Promise<SignedRequest> {
    const delegation = this.usable() ?? (await this.renew());
    const iat = Math.floor(this.now() / 1000);
    const exp = Math.min(iat + REQUEST_JWT_TTL_SECONDS, Math.floor(delegation.expiresAt / 1000));
    const payload = b64url(JSON.stringify({ ...claims, iss: this.issuer, iat, exp }));
    const input = `${delegation.header}.${payload}`;
    const signature = sign("sha256", Buffer.from(input), { key: delegation.privateKey, dsaEncoding: "ieee-p1363" });
    return { jwt: `${input}.${signature.toString("base64url")}`, delegation: delegation.certificate };
  }

  /** Gets a certificate ahead of the first request (errors are left to that request). */
  prime(): void {
    if (!this.usable()) this.renew().catch(() => {});
  }

  /**
   * The current key while a request signed now expires inside its certificate; past half its
   * life a renewal starts in the background.
   */
  private usable(): Delegation | undefined {
    const d = this.current;
    const now = this.now();
    if (!d || now >= d.expiresAt - REQUEST_JWT_TTL_SECONDS * 1000) return undefined;
    if (now >= d.renewAt) this.renew().catch(() => {});
    return d;
  }

  private renew(): Promise<Delegation> {
    if (!this.pending) {
      this.pending = this.issue()
        .then((fresh) => {
          this.current = fresh;
          return fresh;
        })
        .finally(() => {
          this.pending = undefined;
        });
    }
    return this.pending;
  }

  private async issue(): Promise<Delegation> {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const kid = thumbprint(jwk);
    const issuedAt = this.now();
    const certificate = await this.signer.sign(
      this.projectId,
      {
        sub: this.clusterId,
        aud: DELEGATION_AUDIENCE,
        jti: randomUUID(),
        cnf: { jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid } },
      },
      DELEGATION_TTL_SECONDS,
    );
    const exp = decodeJwt(certificate).exp;
    const expiresAt = typeof exp === "number" ? exp * 1000 : issuedAt + DELEGATION_TTL_SECONDS * 1000;
    return {
      privateKey,
      header: b64url(JSON.stringify({ alg: "ES256", typ: "JWT", kid })),
      certificate,
      expiresAt,
      renewAt: issuedAt + (expiresAt - issuedAt) / 2,
    };
  }
}
