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

export function open(secretKey: Uint8Array, sealed: string, context: string): Buffer {
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
