import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = "v1";

/** Which master key wrapped a data key: the first 16 hex digits of its SHA-256. */
export function keyIdOf(masterKey: Uint8Array): string {
  return createHash("sha256").update(masterKey).digest("hex").slice(0, 16);
}

function seal(key: Uint8Array, plaintext: Uint8Array, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [
    VERSION,
    iv.toString("base64url"),
    cipher.getAuthTag().toString("base64url"),
    body.toString("base64url"),
  ].join(".");
}

function open(key: Uint8Array, sealed: string, aad: string): Buffer {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || body === undefined) throw new Error("unknown sealed format");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]);
}

export interface MasterKeys {
  current: Uint8Array;
  previous?: Uint8Array | undefined;
}

export interface Envelope {
  sealed: string;
  wrappedKey: string;
  keyId: string;
}

/**
 * Envelope encryption: the fields are sealed (AES-256-GCM) under a fresh data key, and the data
 * key is sealed under the master key. `context` (the record id and secret version) is bound as
 * additional data, so a ciphertext cannot be moved to another record or version.
 */
export function sealFields(keys: MasterKeys, fields: Record<string, string>, context: string): Envelope {
  const dataKey = randomBytes(32);
  try {
    return {
      sealed: seal(dataKey, Buffer.from(JSON.stringify(fields), "utf8"), context),
      wrappedKey: seal(keys.current, dataKey, `data-key:${context}`),
      keyId: keyIdOf(keys.current),
    };
  } finally {
    dataKey.fill(0);
  }
}

function masterFor(keys: MasterKeys, keyId: string): Uint8Array {
  if (keyIdOf(keys.current) === keyId) return keys.current;
  if (keys.previous && keyIdOf(keys.previous) === keyId) return keys.previous;
  throw new Error(`no master key with id ${keyId} (set AGENTPLANE_SECRET_KEY_PREVIOUS to the key it was wrapped with)`);
}

export function openFields(keys: MasterKeys, envelope: Envelope, context: string): Record<string, string> {
  const dataKey = open(masterFor(keys, envelope.keyId), envelope.wrappedKey, `data-key:${context}`);
  try {
    return JSON.parse(open(dataKey, envelope.sealed, context).toString("utf8")) as Record<string, string>;
  } finally {
    dataKey.fill(0);
  }
}

/** The same data key wrapped by the current master key (the sealed fields do not change). */
export function rewrapKey(keys: MasterKeys, envelope: Envelope, context: string): Envelope {
  if (envelope.keyId === keyIdOf(keys.current)) return envelope;
  const dataKey = open(masterFor(keys, envelope.keyId), envelope.wrappedKey, `data-key:${context}`);
  try {
    return {
      sealed: envelope.sealed,
      wrappedKey: seal(keys.current, dataKey, `data-key:${context}`),
      keyId: keyIdOf(keys.current),
    };
  } finally {
    dataKey.fill(0);
  }
}
