import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";

const VERSION = "v1";

/**
 * AES-256-GCM under the installation secret key. The output is `v1.<iv>.<tag>.<ciphertext>` in
 * base64url; `context` is bound as additional data so a ciphertext cannot be moved to another row.
 */
export function seal(secretKey: Uint8Array, plaintext: string | Uint8Array, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", secretKey, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString("base64url"), tag.toString("base64url"), body.toString("base64url")].join(".");
}

/**
 * The master key (AGENTPLANE_SECRET_KEY) and, during a rotation, the one being rotated out
 * (AGENTPLANE_SECRET_KEY_PREVIOUS), which still opens what it sealed until the start re-seals it.
 */
export interface SecretKeys {
  current: Uint8Array;
  previous?: Uint8Array | undefined;
}

/** Opens with the current key, then with the previous one (a row another replica has not re-sealed yet). */
export function open(keys: Uint8Array | SecretKeys, sealed: string, context: string): Buffer {
  const { current, previous } = keys instanceof Uint8Array ? { current: keys, previous: undefined } : keys;
  try {
    return openWith(current, sealed, context);
  } catch (err) {
    if (!previous) throw err;
    return openWith(previous, sealed, context);
  }
}

/**
 * The same plaintext sealed under the current key, or undefined when the current key opens it
 * already. Throws when neither key opens it (a wrong AGENTPLANE_SECRET_KEY_PREVIOUS).
 */
export function reseal(keys: SecretKeys, sealed: string, context: string): string | undefined {
  try {
    openWith(keys.current, sealed, context);
    return undefined;
  } catch {
    if (!keys.previous) throw new Error("sealed under a key that is neither the current nor the previous one");
  }
  let plaintext: Buffer;
  try {
    plaintext = openWith(keys.previous, sealed, context);
  } catch {
    throw new Error("sealed under a key that is neither the current nor the previous one");
  }
  try {
    return seal(keys.current, plaintext, context);
  } finally {
    plaintext.fill(0);
  }
}

function openWith(secretKey: Uint8Array, sealed: string, context: string): Buffer {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || body === undefined) throw new Error("unknown sealed format");
  const decipher = createDecipheriv("aes-256-gcm", secretKey, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]);
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/** Compares two hex digests without leaking where they differ. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

export function assertSecretKey(key: Uint8Array): void {
  if (key.length !== 32) throw new Error("the secret key must be 32 bytes (AES-256)");
}
