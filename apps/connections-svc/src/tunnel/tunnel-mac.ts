import {
  createHash,
  createPublicKey,
  createSecretKey,
  diffieHellman,
  hkdfSync,
  type JsonWebKey,
  type KeyObject,
} from "node:crypto";

/**
 * The per-certificate MAC key of tunnel requests (docs/decisions/0008-tunnel-request-mac.md): ECDH
 * (P-256) between the key-agreement key a delegation certificate names (`kex`) and the relay's own
 * key-agreement key, through HKDF-SHA256 bound to the cluster and both keys. The relay derives
 * the same key (`apps/cluster-relay/src/mac.ts`); nobody else can.
 */
export const TUNNEL_MAC_INFO = "agentplane-tunnel-request-mac-v1";

/** RFC 7638 thumbprint of an EC public key: its `kid`. */
export function thumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash("sha256").update(canonical).digest("base64url");
}

export function tunnelMacKey(args: {
  privateKey: KeyObject;
  publicKey: KeyObject;
  clusterId: string;
  /** Thumbprints of the certificate's `kex` key and of the relay's key. */
  platformKid: string;
  relayKid: string;
}): KeyObject {
  const secret = diffieHellman({ privateKey: args.privateKey, publicKey: args.publicKey });
  const info = `${TUNNEL_MAC_INFO}:${args.clusterId}:${args.platformKid}:${args.relayKid}`;
  // A KeyObject: createHmac takes it without the checks a raw key goes through (a third of its cost).
  return createSecretKey(Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), info, 32)));
}

export interface RelayAgreementKey {
  key: KeyObject;
  kid: string;
}

/** The relay's key-agreement key from its status answer: a public EC P-256 JWK, or an error. */
export function relayAgreementKey(jwk: unknown): RelayAgreementKey {
  const k = jwk as Record<string, unknown> | null;
  if (!k || typeof k !== "object" || k.kty !== "EC" || k.crv !== "P-256" || "d" in k) {
    throw new Error("the relay's key is no public EC P-256 key");
  }
  if (typeof k.x !== "string" || typeof k.y !== "string") throw new Error("the relay's key has no point");
  const clean = { kty: "EC", crv: "P-256", x: k.x, y: k.y };
  // createPublicKey refuses a point that is not on the curve.
  return { key: createPublicKey({ key: clean, format: "jwk" }), kid: thumbprint(clean) };
}
