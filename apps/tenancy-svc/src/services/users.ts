import { newId, type Principal } from "@agentplane/contracts";
import type { Kysely, Selectable } from "kysely";
import type { TenancyDatabase, UserTable } from "../db/schema.ts";

type Db = Kysely<TenancyDatabase>;

export function userPrincipal(user: Selectable<UserTable>): Principal {
  return {
    type: "user",
    id: user.id,
    ...(user.display_name || user.email ? { displayName: (user.display_name ?? user.email)! } : {}),
  };
}

export async function createUser(db: Db, input: { email?: string; name?: string }): Promise<Selectable<UserTable>> {
  return db
    .insertInto("users")
    .values({ id: newId("user"), email: input.email ?? null, display_name: input.name ?? null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Finds the user behind a verified OIDC identity (iss, sub), provisioning it on first sight. */
export async function resolveOidcUser(
  db: Db,
  input: {
    issuer: string;
    subject: string;
    email?: string | undefined;
    unverifiedEmail?: string | undefined;
    name?: string | undefined;
  },
): Promise<Selectable<UserTable>> {
  const existing = await db
    .selectFrom("user_identities as i")
    .innerJoin("users as u", "u.id", "i.user_id")
    .selectAll("u")
    .where("i.issuer", "=", input.issuer)
    .where("i.subject", "=", input.subject)
    .executeTakeFirst();
  if (existing) {
    // Keep the profile as the identity provider has it now. An address it no longer vouches for
    // (one stored before verification was required, decision 0036) is no longer the user's.
    const unvouched = input.unverifiedEmail !== undefined && sameAddress(existing.email, input.unverifiedEmail);
    const email = input.email ?? (unvouched ? null : existing.email);
    const name = input.name ?? existing.display_name;
    if (email !== existing.email || name !== existing.display_name) {
      return db
        .updateTable("users")
        .set({ email, display_name: name })
        .where("id", "=", existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    return existing;
  }
  const created = await db.transaction().execute(async (trx) => {
    const user = await createUser(trx, {
      ...(input.email ? { email: input.email } : {}),
      ...(input.name ? { name: input.name } : {}),
    });
    const linked = await trx
      .insertInto("user_identities")
      .values({ issuer: input.issuer, subject: input.subject, user_id: user.id })
      .onConflict((oc) => oc.columns(["issuer", "subject"]).doNothing())
      .returning("user_id")
      .executeTakeFirst();
    if (!linked) {
      // Another request provisioned the same identity first; drop ours and use theirs.
      await trx.deleteFrom("users").where("id", "=", user.id).execute();
      return undefined;
    }
    return user;
  });
  if (created) return created;
  return db
    .selectFrom("user_identities as i")
    .innerJoin("users as u", "u.id", "i.user_id")
    .selectAll("u")
    .where("i.issuer", "=", input.issuer)
    .where("i.subject", "=", input.subject)
    .executeTakeFirstOrThrow();
}

/** Addresses compare without regard to case (providers and people vary it). */
function sameAddress(stored: string | null, claimed: string): boolean {
  return stored !== null && stored.toLowerCase() === claimed.toLowerCase();
}

export async function getUser(db: Db, userId: string): Promise<Selectable<UserTable> | undefined> {
  return db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst();
}
