import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The key that encrypts secrets at rest. Configured with AGENTPLANE_SECRET_KEY (base64, 32 bytes);
 * in the embedded mode it is generated once into the data dir (mode 0600) and reused.
 */
export function loadOrCreateSecretKey(dataDir: string, configured: string | undefined): Buffer {
  if (configured) {
    const key = Buffer.from(configured, "base64");
    if (key.length !== 32) throw new Error("AGENTPLANE_SECRET_KEY must be 32 bytes, base64-encoded");
    return key;
  }
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "secret.key");
  if (existsSync(file)) return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600 });
  return key;
}
