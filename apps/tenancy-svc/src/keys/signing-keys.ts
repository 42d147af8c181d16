import { newId } from "@agentplane/contracts";
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importJWK, importPKCS8, type JWK } from "jose";
import { type Kysely, sql } from "kysely";
import { open, type SecretKeys, seal } from "../crypto/secret-box.ts";
import type { TenancyDatabase } from "../db/schema.ts";

export const SIGNING_ALG = "ES256";

type Db = Kysely<TenancyDatabase>;

/** A public key as published in a project's JWKS. */
export interface PublishedJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  alg: string;
  use: string;
  [member: string]: string;
}

type SigningKeyObject = Awaited<ReturnType<typeof importPKCS8>>;

export function signingKeyContext(kid: string): string {
  return `signing-key:${kid}`;
}

/** Generates a new ES256 key pair for a project and stores it (private part encrypted) as `current`. */
export async function insertCurrentKey(db: Db, secretKey: Uint8Array, projectId: string): Promise<PublishedJwk> {
  const kid = newId("signingKey");
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const { kty, crv, x, y } = (await exportJWK(publicKey)) as JWK;
  const jwk: PublishedJwk = { kty: kty!, crv: crv!, x: x!, y: y!, kid, alg: SIGNING_ALG, use: "sig" };
  const pkcs8 = await exportPKCS8(privateKey);
  await db
    .insertInto("signing_keys")
    .values({
      id: kid,
      project_id: projectId,
      public_jwk: JSON.stringify(jwk),
      private_key_enc: seal(secretKey, pkcs8, signingKeyContext(kid)),
      status: "current",
      published_until: null,
    })
    .execute();
  return jwk;
}

/**
 * Rotates within the caller's transaction: the current key becomes `previous`, published until
 * now + grace; keys whose grace ended are marked retired; a new current key is made.
 */
export async function rotateKeys(
  db: Db,
  secretKey: Uint8Array,
  projectId: string,
  graceSeconds: number,
): Promise<{ kid: string; previousKid: string; previousPublishedUntil: Date }> {
  const current = await db
    .selectFrom("signing_keys")
    .select("id")
    .where("project_id", "=", projectId)
    .where("status", "=", "current")
    .forUpdate()
    .executeTakeFirst();
  if (!current) throw new Error(`project ${projectId} has no current key`);
  const now = new Date();
  const until = new Date(now.getTime() + graceSeconds * 1000);
  await db
    .updateTable("signing_keys")
    .set({ status: "retired" })
    .where("project_id", "=", projectId)
    .where("status", "=", "previous")
    .where("published_until", "<=", now)
    .execute();
  await db
    .updateTable("signing_keys")
    .set({ status: "previous", published_until: until })
    .where("id", "=", current.id)
    .execute();
  const jwk = await insertCurrentKey(db, secretKey, projectId);
  return { kid: jwk.kid, previousKid: current.id, previousPublishedUntil: until };
}

/** Every key a verifier should accept now: the current one and previous ones within their grace. */
export async function publishedKeys(db: Db, projectId: string): Promise<PublishedJwk[]> {
  const rows = await db
    .selectFrom("signing_keys")
    .select(["public_jwk", "status"])
    .where("project_id", "=", projectId)
    .where((eb) =>
      eb.or([
        eb("status", "=", "current"),
        eb.and([eb("status", "=", "previous"), eb("published_until", ">", sql<Date>`now()`)]),
      ]),
    )
    .orderBy("created_at", "desc")
    .execute();
  // The current key first, so a client that takes the first key signs with the right one.
  rows.sort((a, b) => (a.status === "current" ? -1 : b.status === "current" ? 1 : 0));
  return rows.map((r) => JSON.parse(r.public_jwk) as PublishedJwk);
}

export async function currentPublicKey(
  db: Db,
  projectId: string,
): Promise<{ kid: string; jwk: PublishedJwk; pem: string; createdAt: Date } | undefined> {
  const row = await db
    .selectFrom("signing_keys")
    .select(["id", "public_jwk", "created_at"])
    .where("project_id", "=", projectId)
    .where("status", "=", "current")
    .executeTakeFirst();
  if (!row) return undefined;
  const jwk = JSON.parse(row.public_jwk) as PublishedJwk;
  const key = await importJWK(jwk, SIGNING_ALG);
  const pem = await exportSPKI(key as SigningKeyObject);
  return { kid: row.id, jwk, pem, createdAt: row.created_at };
}

/**
 * The current private signing key of a project, decrypted: for issuing platform-signed tokens
 * (cluster JWTs) in the process that holds the secret key. Never leaves the process.
 */
export async function currentSigningKey(
  db: Db,
  secretKeys: Uint8Array | SecretKeys,
  projectId: string,
): Promise<{ kid: string; privateKey: SigningKeyObject } | undefined> {
  const row = await db
    .selectFrom("signing_keys")
    .select(["id", "private_key_enc"])
    .where("project_id", "=", projectId)
    .where("status", "=", "current")
    .executeTakeFirst();
  if (!row) return undefined;
  const pkcs8 = open(secretKeys, row.private_key_enc, signingKeyContext(row.id)).toString("utf8");
  return { kid: row.id, privateKey: await importPKCS8(pkcs8, SIGNING_ALG) };
}
