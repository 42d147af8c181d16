import { randomBytes } from "node:crypto";

/** Id prefixes: readable in logs and audit, one per resource kind. */
export const ID_PREFIXES = {
  user: "usr",
  org: "org",
  team: "team",
  project: "prj",
  invitation: "inv",
  apiToken: "tok",
  signingKey: "key",
  installation: "inst",
  activation: "act",
  deviceAuthorization: "dva",
  cluster: "cl",
  sandbox: "sbx",
  sandboxToken: "sbt",
  revision: "rev",
  shellSession: "shs",
  browserSession: "ses",
  run: "run",
  spendingLimit: "spl",
  reservation: "rsv",
  audit: "aud",
  usage: "use",
  policy: "pol",
  policyBinding: "pbd",
  credential: "cred",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function encodeBase32(buf: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** A prefixed id that sorts by creation time: 48-bit milliseconds then 80 random bits, Crockford base32. */
export function newId(kind: IdKind): string {
  const bytes = new Uint8Array(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes.set(randomBytes(10), 6);
  return `${ID_PREFIXES[kind]}_${encodeBase32(bytes)}`;
}

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIXES[kind]}_[0-9a-z]{26}$`);
}
