import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { ConfigError, parseSecretKey, type RuntimeConfig } from "../config.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";

/** Where the key lives when AGENT_SECRET_KEY is not set: generated once, beside the database. */
export const SECRET_KEY_FILE = "secret.key";
const VERSION = "v1";

/**
 * The key that encrypts secrets at rest: AGENT_SECRET_KEY (checked by loadConfig), else
 * `<data dir>/secret.key`, generated (mode 0600) at first start. An in-memory database gets a key
 * that lives as long as it does.
 */
export function loadSecretKey(config: RuntimeConfig): Buffer {
  const configured = config.env.AGENT_SECRET_KEY;
  if (configured) {
    const key = parseSecretKey(configured);
    if (!key) throw new ConfigError("AGENT_SECRET_KEY", "must be 32 bytes, base64-encoded");
    return key;
  }
  if (config.databasePath === ":memory:") return randomBytes(32);
  const file = join(config.dataDir, SECRET_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  }
  const key = parseSecretKey(readFileSync(file, "utf8"));
  if (!key) throw new ConfigError("AGENT_SECRET_KEY", `is unset and ${file} does not hold 32 bytes, base64-encoded`);
  return key;
}

/** AES-256-GCM: `v1:<iv>:<tag>:<ciphertext>`, each base64. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const data = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
    return [VERSION, iv.toString("base64"), cipher.getAuthTag().toString("base64"), data.toString("base64")].join(":");
  }

  /** Throws when the text was not sealed with this key (or was altered). */
  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(":");
    if (version !== VERSION || !iv || !tag || data === undefined) throw new Error("not a sealed secret");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8");
  }
}

/**
 * The data half of migration 0008: webhook verification secrets stored in plain text before it
 * (`verification_secret_sealed = 0`) are sealed with the key, in one transaction. Then every
 * sealed secret must open with the key: a changed or wrong key stops the start here, naming the
 * variable, instead of failing each delivery later.
 */
export async function sealStoredSecrets(db: Kysely<RuntimeDatabase>, box: SecretBox): Promise<number> {
  const sealed = await db.transaction().execute(async (trx) => {
    const plain = await trx
      .selectFrom("webhook_subscription")
      .select(["name", "verification_secret"])
      .where("verification_secret_sealed", "=", 0)
      .where("verification_secret", "is not", null)
      .execute();
    for (const row of plain) {
      await trx
        .updateTable("webhook_subscription")
        .set({ verification_secret: box.seal(row.verification_secret as string), verification_secret_sealed: 1 })
        .where("name", "=", row.name)
        .execute();
    }
    return plain.length;
  });
  const stored = await db
    .selectFrom("webhook_subscription")
    .select(["name", "verification_secret"])
    .where("verification_secret", "is not", null)
    .execute();
  for (const row of stored) {
    try {
      box.open(row.verification_secret as string);
    } catch {
      throw new ConfigError(
        "AGENT_SECRET_KEY",
        `does not open the verification secret of webhook subscription ${row.name}: the key is not the one its secrets were stored with`,
      );
    }
  }
  return sealed;
}
