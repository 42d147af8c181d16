import {
  createHash,
  createHmac,
  createPublicKey,
  createSecretKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type JsonWebKey,
  type KeyObject,
  timingSafeEqual,
} from "node:crypto";
import type { JWTPayload } from "jose";
import { VerificationError } from "./verification-error.ts";

/**
 * MAC'd request JWTs (docs/decisions/0008-tunnel-request-mac.md). The relay holds a key-agreement
 * key (EC P-256, in memory, made at start) and names its public half in its status answer. A
 * delegation certificate names the platform's key-agreement key (`kex`); ECDH between the two,
 * through HKDF-SHA256 bound to the cluster and both keys, gives the MAC key of the requests sent
 * under that certificate. Only the platform (holding the certificate's private `kex`) and this
 * relay can compute it, so a hijacked tunnel that swaps the relay's key only breaks its own
 * requests. The same derivation is `apps/connections-svc/src/tunnel/tunnel-mac.ts`.
 */
export const TUNNEL_MAC_INFO = "agentplane-tunnel-request-mac-v1";

export interface AgreementPublicKey {
  key: KeyObject;
  kid: string;
}

/** RFC 7638 thumbprint of an EC public key. */
export function thumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash("sha256").update(canonical).digest("base64url");
}

/** A certificate's `kex` claim as a key, or undefined when it names no public EC P-256 key. */
export function agreementKeyOf(claim: unknown): AgreementPublicKey | undefined {
  const k = claim as Record<string, unknown> | null;
  if (!k || typeof k !== "object" || k.kty !== "EC" || k.crv !== "P-256" || "d" in k) return undefined;
  if (typeof k.x !== "string" || typeof k.y !== "string") return undefined;
  const clean = { kty: "EC", crv: "P-256", x: k.x, y: k.y };
  try {
    return { key: createPublicKey({ key: clean, format: "jwk" }), kid: thumbprint(clean) };
  } catch {
    return undefined;
  }
}

/** The relay's key-agreement key pair. */
export class RelayAgreement {
  private readonly privateKey: KeyObject;
  readonly kid: string;
  /** What the status answer names (`tunnelKey`). */
  readonly publicJwk: { kty: string; crv: string; x: string; y: string; kid: string };

  constructor() {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = pair.privateKey;
    const jwk = pair.publicKey.export({ format: "jwk" });
    this.kid = thumbprint(jwk);
    this.publicJwk = { kty: "EC", crv: "P-256", x: String(jwk.x), y: String(jwk.y), kid: this.kid };
  }

  /** The MAC key agreed with a certificate's `kex` key, for this cluster. */
  macKey(platform: AgreementPublicKey, clusterId: string): KeyObject {
    const secret = diffieHellman({ privateKey: this.privateKey, publicKey: platform.key });
    const info = `${TUNNEL_MAC_INFO}:${clusterId}:${platform.kid}:${this.kid}`;
    // A KeyObject: createHmac takes it without the checks a raw key goes through (a third of its cost).
    return createSecretKey(Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), info, 32)));
  }
}

/** The payload of an HS256 JWT whose MAC checks with `key` (claims are the caller's to check). */
export function verifyMac(token: string, key: KeyObject): JWTPayload {
  const parts = token.split(".");
  if (parts.length !== 3) throw new VerificationError("signature refused: not a JWT");
  const [header, payload, mac] = parts as [string, string, string];
  const expected = createHmac("sha256", key).update(`${header}.${payload}`).digest();
  const given = Buffer.from(mac, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new VerificationError("signature refused: signature verification failed");
  }
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as unknown;
    if (!claims || typeof claims !== "object" || Array.isArray(claims)) throw new Error("not an object");
    return claims as JWTPayload;
  } catch {
    throw new VerificationError("signature refused: the payload is no JSON object");
  }
}
