import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { TUNNEL_TOKEN_ID_PREFIX, TUNNEL_TOKEN_PREFIX } from "@agentplane/contracts";
import { prefixedId } from "./ids.ts";

/** A new tunnel token: `apct_<tokenId>_<secret>`; only the id and a hash of the secret are stored. */
export function newTunnelToken(): { id: string; token: string; hash: string } {
  const id = prefixedId(TUNNEL_TOKEN_ID_PREFIX.slice(0, -1));
  const secret = randomBytes(32).toString("hex");
  return { id, token: `${TUNNEL_TOKEN_PREFIX}${id}_${secret}`, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Splits a presented token into its id and secret, or undefined when it is not shaped like one. */
export function parseTunnelToken(token: string): { id: string; secret: string } | undefined {
  const m = /^apct_(ctt_[0-9a-z]{26})_([0-9a-f]{64})$/.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

export function secretMatches(secret: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(secret), "hex");
  const b = Buffer.from(hash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
