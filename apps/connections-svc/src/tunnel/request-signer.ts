import { createHmac, generateKeyPairSync, type KeyObject, randomUUID, sign } from "node:crypto";
import { clusterJwtIssuer } from "@agentplane/contracts";
import { decodeJwt } from "jose";
import type { ProjectSigner } from "../services/project-signer.ts";
import {
  DELEGATION_AUDIENCE,
  DELEGATION_TTL_SECONDS,
  REQUEST_JWT_TTL_SECONDS,
  type requestClaims,
} from "./protocol.ts";
import { type RelayAgreementKey, relayAgreementKey, thumbprint, tunnelMacKey } from "./tunnel-mac.ts";

/** What a request down a tunnel carries: its JWT and the certificate of the key that signed it. */
export interface SignedRequest {
  jwt: string;
  delegation: string;
}

interface Delegation {
  privateKey: KeyObject;
  /** The encoded protected header of every JWT this key signs (`alg`, `typ`, `kid`). */
  header: string;
  /** The same header for a MAC'd request JWT (`HS256`, same `kid`). */
  macHeader: string;
  /** This certificate's key-agreement key (its public half is the certificate's `kex`, 0008). */
  agreement: { privateKey: KeyObject; kid: string };
  /** The MAC key agreed with the relay's key, once there is one. */
  mac?: { relay: RelayAgreementKey; key: KeyObject };
  certificate: string;
  /** Milliseconds: the certificate's `exp`, and when a renewal starts (half its life). */
  expiresAt: number;
  renewAt: number;
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

const publicJwk = (key: KeyObject, kid: string) => {
  const jwk = key.export({ format: "jwk" });
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid };
};

/**
 * Signs the per-request JWTs of one tunnel (docs/decisions/0007-delegated-request-signing.md).
 * Tenancy certifies a key pair made here, per tunnel: the certificate is a JWT signed with the
 * project's current key naming the cluster and the public key (`cnf.jwk`), valid 10 minutes and
 * renewed at half. Each request is then signed here with the private key (ES256, the same claims:
 * method, path, body hash, `jti`, ≤ 60 s, never past the certificate), without a round trip to
 * tenancy. The private key never leaves this process and dies with the tunnel.
 *
 * Once the relay has named its key-agreement key (`acceptRelayKey`, from its status answer), a
 * request is MAC'd instead (HS256 with the key both sides agree from the certificate's `kex` and
 * the relay's key: docs/decisions/0008-tunnel-request-mac.md).
 */
export class TunnelRequestSigner {
  private readonly signer: ProjectSigner;
  private readonly projectId: string;
  private readonly clusterId: string;
  private readonly issuer: string;
  private readonly now: () => number;
  private current: Delegation | undefined;
  private pending: Promise<Delegation> | undefined;
  private relayKey: RelayAgreementKey | undefined;

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
    const mac = this.macKey(delegation);
    const input = `${mac ? delegation.macHeader : delegation.header}.${payload}`;
    const signature = mac
      ? createHmac("sha256", mac).update(input).digest()
      : sign("sha256", Buffer.from(input), { key: delegation.privateKey, dsaEncoding: "ieee-p1363" });
    return { jwt: `${input}.${signature.toString("base64url")}`, delegation: delegation.certificate };
  }

  /**
   * The relay's key-agreement key (a public EC P-256 JWK, from its status answer): requests are
   * MAC'd from now on. Throws on anything else, leaving requests signed.
   */
  acceptRelayKey(jwk: unknown): void {
    this.relayKey = relayAgreementKey(jwk);
  }

  private macKey(delegation: Delegation): KeyObject | undefined {
    const relay = this.relayKey;
    if (!relay) return undefined;
    if (delegation.mac?.relay !== relay) {
      const key = tunnelMacKey({
        privateKey: delegation.agreement.privateKey,
        publicKey: relay.key,
        clusterId: this.clusterId,
        platformKid: delegation.agreement.kid,
        relayKid: relay.kid,
      });
      delegation.mac = { relay, key };
    }
    return delegation.mac.key;
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
    const agreement = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const agreementKid = thumbprint(agreement.publicKey.export({ format: "jwk" }));
    const issuedAt = this.now();
    const certificate = await this.signer.sign(
      this.projectId,
      {
        sub: this.clusterId,
        aud: DELEGATION_AUDIENCE,
        jti: randomUUID(),
        cnf: { jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid } },
        kex: publicJwk(agreement.publicKey, agreementKid),
      },
      DELEGATION_TTL_SECONDS,
    );
    const exp = decodeJwt(certificate).exp;
    const expiresAt = typeof exp === "number" ? exp * 1000 : issuedAt + DELEGATION_TTL_SECONDS * 1000;
    return {
      privateKey,
      header: b64url(JSON.stringify({ alg: "ES256", typ: "JWT", kid })),
      macHeader: b64url(JSON.stringify({ alg: "HS256", typ: "JWT", kid })),
      agreement: { privateKey: agreement.privateKey, kid: agreementKid },
      certificate,
      expiresAt,
      renewAt: issuedAt + (expiresAt - issuedAt) / 2,
    };
  }
}
