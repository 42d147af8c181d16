import { clusterJwtIssuer } from "@agentplane/contracts";
import { SignJWT } from "jose";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import type { SecretKeys } from "../crypto/secret-box.ts";
import type { TenancyDatabase } from "../db/schema.ts";
import { currentSigningKey, type PublishedJwk, publishedKeys, SIGNING_ALG } from "../keys/signing-keys.ts";

type Db = Kysely<TenancyDatabase>;
type SigningKey = Awaited<ReturnType<typeof currentSigningKey>>;

/** What the caller names (the validated SignProjectTokenRequest): `iss` and `kid` are the project's. */
export interface ProjectTokenInput {
  subject: string;
  audience: string;
  ttlSeconds: number;
  claims: Record<string, unknown>;
}

/** A project's organization and the keys that verify its platform-signed tokens; undefined: no such project. */
export async function projectVerificationKeys(
  db: Db,
  projectId: string,
): Promise<{ orgId: string; keys: PublishedJwk[] } | undefined> {
  const project = await db.selectFrom("projects").select("org_id").where("id", "=", projectId).executeTakeFirst();
  if (!project) return undefined;
  return { orgId: project.org_id, keys: await publishedKeys(db, projectId) };
}

/**
 * Platform-signed tokens (cluster JWTs, per-request tunnel JWTs): the private key never leaves
 * tenancy. The decrypted current key is kept 5 s per project (one is signed per proxied request);
 * after a rotation the previous key stays published, so tokens signed with it in that window verify.
 */
export class ProjectTokenSigner {
  readonly #db: Db;
  readonly #secretKeys: Uint8Array | SecretKeys;
  readonly #keys = new LRUCache<string, Promise<SigningKey>>({ max: 10_000, ttl: 5000 });

  constructor(db: Db, secretKeys: Uint8Array | SecretKeys) {
    this.#db = db;
    this.#secretKeys = secretKeys;
  }

  /** The signed token and its key id; undefined when the project does not exist (or has no key). */
  async sign(projectId: string, input: ProjectTokenInput): Promise<{ token: string; kid: string } | undefined> {
    const key = await this.#key(projectId);
    if (!key) {
      this.#keys.delete(projectId);
      return undefined;
    }
    const token = await new SignJWT(input.claims)
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid })
      .setIssuer(clusterJwtIssuer(projectId))
      .setSubject(input.subject)
      .setAudience(input.audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + input.ttlSeconds)
      .sign(key.privateKey);
    return { token, kid: key.kid };
  }

  #key(projectId: string): Promise<SigningKey> {
    const hit = this.#keys.get(projectId);
    if (hit) return hit;
    const key = currentSigningKey(this.#db, this.#secretKeys, projectId);
    this.#keys.set(projectId, key);
    key.catch(() => {
      if (this.#keys.peek(projectId) === key) this.#keys.delete(projectId);
    });
    return key;
  }
}
