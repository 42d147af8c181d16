import type { Kysely } from "kysely";
import { reseal, type SecretKeys } from "../crypto/secret-box.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { deviceTokenContext } from "../services/device-auth.ts";
import { activationTokenContext } from "../services/installation.ts";
import { signingKeyContext } from "./signing-keys.ts";

type Db = Kysely<TenancyDatabase>;

/** What tenancy keeps sealed under the master key: each table's column and its sealing context. */
const SEALED = [
  { table: "signing_keys", column: "private_key_enc", context: signingKeyContext, what: "project signing key" },
  { table: "device_authorizations", column: "token_enc", context: deviceTokenContext, what: "device sign-in token" },
  { table: "activation_sessions", column: "token_enc", context: activationTokenContext, what: "activation token" },
] as const;

export interface RewrapResult {
  /** Rows re-sealed under the current key, by table. */
  rewrapped: Record<(typeof SEALED)[number]["table"], number>;
}

/**
 * Re-seals under the current master key everything tenancy sealed under the previous one (after
 * an operator set AGENTPLANE_SECRET_KEY to a new key and AGENTPLANE_SECRET_KEY_PREVIOUS to the
 * old): project signing keys, device sign-in and activation tokens waiting to be handed over.
 * Rows the current key opens already are left alone, so a second run (another replica, the next
 * start) changes nothing; a row that changed meanwhile (a token handed over) is not overwritten.
 * Throws, naming the row, when neither key opens one: the previous key is not the one in use.
 */
export async function rewrapSealedSecrets(db: Db, keys: SecretKeys): Promise<RewrapResult> {
  const rewrapped = { signing_keys: 0, device_authorizations: 0, activation_sessions: 0 };
  if (!keys.previous) return { rewrapped };
  for (const { table, column, context, what } of SEALED) {
    // The three tables share `id` and a nullable or non-null text column; Kysely's types see them one at a time.
    const rows = (await db
      .selectFrom(table)
      .select(["id", column])
      .where(column, "is not", null)
      .execute()) as unknown as ({ id: string } & Record<typeof column, string | null>)[];
    for (const row of rows) {
      const sealed = row[column];
      if (!sealed) continue;
      let next: string | undefined;
      try {
        next = reseal(keys, sealed, context(row.id));
      } catch {
        throw new Error(
          `the ${what} ${row.id} opens with neither AGENTPLANE_SECRET_KEY nor AGENTPLANE_SECRET_KEY_PREVIOUS: ` +
            "set AGENTPLANE_SECRET_KEY_PREVIOUS to the master key in use before this rotation",
        );
      }
      if (next === undefined) continue;
      const result = await db
        .updateTable(table)
        .set({ [column]: next })
        .where("id", "=", row.id)
        .where(column, "=", sealed)
        .executeTakeFirst();
      rewrapped[table] += Number(result.numUpdatedRows);
    }
  }
  return { rewrapped };
}
