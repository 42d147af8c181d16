import { type Principal, PrincipalSchema } from "@agentplane/contracts";
import { decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from "jose";
import { ConfigError } from "./config.ts";
import { type ScopedIdentityKey, scopedIssuer, scopedRouteAllows } from "./scoped-identity.ts";

type Key = Awaited<ReturnType<typeof importJWK>>;

const ISSUER = "agentplane";
const ALG = "EdDSA";

/** The key pair behind the internal identity JWT: the gateway signs, services verify. */
export interface InternalKeys {
  privateKey?: Key;
  publicKey: Key;
  /**
   * Set for a signer's own pair (`egress`), not the shared one: its tokens carry it as `kid` and
   * are accepted only where a service lists it as a ScopedIdentityKey (decision 0062).
   */
  keyId?: string;
}

export async function generateInternalKeys(): Promise<InternalKeys & { privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: "Ed25519", extractable: true });
  return { privateKey, publicKey, privateJwk: await exportJWK(privateKey), publicJwk: await exportJWK(publicKey) };
}

/**
 * Parses and imports one key variable (a private JWK, which includes its public half, or a public
 * one); a bad value is a ConfigError naming the variable.
 */
async function importKeyVariable(name: string, value: string): Promise<{ key: Key; publicKey: Key }> {
  try {
    const { d, ...publicPart } = JSON.parse(value) as JWK;
    const publicKey = await importJWK(publicPart, ALG);
    return { key: d === undefined ? publicKey : await importJWK({ ...publicPart, d }, ALG), publicKey };
  } catch (err) {
    throw new ConfigError([
      {
        name,
        message: `not an Ed25519 JSON Web Key (${(err as Error).message}); generate the keys again with \`node scripts/bootstrap.mjs platform keys\``,
      },
    ]);
  }
}

/** From `INTERNAL_IDENTITY_PRIVATE_KEY` (JWK JSON, includes the public part) or `INTERNAL_IDENTITY_PUBLIC_KEY`. */
export async function importInternalKeys(options: { privateJwk?: string; publicJwk?: string }): Promise<InternalKeys> {
  if (options.privateJwk) {
    const { key, publicKey } = await importKeyVariable("INTERNAL_IDENTITY_PRIVATE_KEY", options.privateJwk);
    return { privateKey: key, publicKey };
  }
  if (options.publicJwk) {
    return { publicKey: (await importKeyVariable("INTERNAL_IDENTITY_PUBLIC_KEY", options.publicJwk)).publicKey };
  }
  throw new Error("INTERNAL_IDENTITY_PRIVATE_KEY or INTERNAL_IDENTITY_PUBLIC_KEY must be set");
}

/**
 * A signer's own pair from its private key variable (`EGRESS_IDENTITY_PRIVATE_KEY`): its tokens
 * name `keyId` and are accepted only by the services that list its public key, on their routes.
 */
export async function importOwnKeys(keyId: string, name: string, privateJwk: string): Promise<InternalKeys> {
  const { key, publicKey } = await importKeyVariable(name, privateJwk);
  return { privateKey: key, publicKey, keyId };
}

/** A scoped signer's public key from its variable (JWK JSON; a private JWK's public half). */
export async function importScopedPublicKey(name: string, value: string): Promise<Key> {
  return (await importKeyVariable(name, value)).publicKey;
}

export interface SignIdentityOptions {
  audience: string;
  requestId?: string;
  /** Seconds (default 60): long enough for a streamed request, short enough to be useless if leaked. */
  ttlSeconds?: number;
}

export async function signIdentity(
  keys: InternalKeys,
  principal: Principal,
  options: SignIdentityOptions,
): Promise<string> {
  if (!keys.privateKey) throw new Error("this process holds no internal identity private key");
  return new SignJWT({ principal, ...(options.requestId ? { rid: options.requestId } : {}) })
    .setProtectedHeader(keys.keyId ? { alg: ALG, kid: keys.keyId } : { alg: ALG })
    .setIssuer(keys.keyId ? scopedIssuer(keys.keyId) : ISSUER)
    .setAudience(options.audience)
    .setSubject(principal.id)
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 60}s`)
    .sign(keys.privateKey);
}

export interface VerifiedIdentity {
  principal: Principal;
  requestId?: string;
  /** The scoped signer (`egress`) when the token was signed with its own key, not the shared one. */
  signer?: string;
}

export async function verifyIdentity(keys: InternalKeys, token: string, audience: string): Promise<VerifiedIdentity> {
  const { payload } = await jwtVerify(token, keys.publicKey, { issuer: ISSUER, audience, algorithms: [ALG] });
  const principal = PrincipalSchema.parse(payload.principal);
  return { principal, ...(typeof payload.rid === "string" ? { requestId: payload.rid } : {}) };
}

/** The identity a service uses for its own calls to another service. */
export function servicePrincipal(service: string): Principal {
  return { type: "service", id: `svc_${service}`, displayName: service };
}

/**
 * Signs internal identities, reusing a token for the same principal and audience while it has
 * more than half its lifetime left: signing is the gateway's main per-request cost.
 */
export class IdentitySigner {
  private readonly keys: InternalKeys;
  private readonly ttlSeconds: number;
  private readonly cache = new Map<string, { token: Promise<string>; renewAt: number }>();
  private readonly byObject = new WeakMap<Principal, Map<string, { token: Promise<string>; renewAt: number }>>();

  constructor(keys: InternalKeys, options: { ttlSeconds?: number } = {}) {
    this.keys = keys;
    this.ttlSeconds = options.ttlSeconds ?? 60;
  }

  sign(principal: Principal, audience: string): Promise<string> {
    const now = Date.now();
    // The same principal object (an authenticator's cached answer) finds its token without
    // serializing the principal; another object with the same content finds it by its text.
    const byAudience = this.byObject.get(principal);
    const recent = byAudience?.get(audience);
    if (recent && recent.renewAt > now) return recent.token;
    const key = `${audience}\u0000${JSON.stringify(principal)}`;
    const hit = this.cache.get(key);
    if (hit && hit.renewAt > now) {
      this.remember(principal, audience, hit);
      return hit.token;
    }
    const token = signIdentity(this.keys, principal, { audience, ttlSeconds: this.ttlSeconds });
    if (this.cache.size > 10_000) this.cache.clear();
    const entry = { token, renewAt: now + (this.ttlSeconds * 1000) / 2 };
    this.cache.set(key, entry);
    this.remember(principal, audience, entry);
    token.catch(() => {
      this.cache.delete(key);
      this.byObject.get(principal)?.delete(audience);
    });
    return token;
  }

  private remember(principal: Principal, audience: string, entry: { token: Promise<string>; renewAt: number }): void {
    let byAudience = this.byObject.get(principal);
    if (!byAudience) {
      byAudience = new Map();
      this.byObject.set(principal, byAudience);
    }
    byAudience.set(audience, entry);
  }
}

/** The request an identity comes with: a scoped signer's identity is accepted on its routes only. */
export interface IdentityRequest {
  method: string;
  path: string;
}

/**
 * Verifies internal identities, remembering a verified token until it expires. A token without
 * `kid` is checked against the shared key; one naming a scoped signer, against that signer's key
 * and only on its routes; any other `kid` is refused.
 */
export class IdentityVerifier {
  private readonly keys: InternalKeys;
  private readonly audience: string;
  private readonly scoped: ReadonlyMap<string, ScopedIdentityKey>;
  private readonly cache = new Map<string, { identity: VerifiedIdentity; expiresAt: number }>();

  constructor(keys: InternalKeys, audience: string, scoped: readonly ScopedIdentityKey[] = []) {
    this.keys = keys;
    this.audience = audience;
    this.scoped = new Map(scoped.map((key) => [key.id, key]));
  }

  async verify(token: string, request?: IdentityRequest): Promise<VerifiedIdentity> {
    const now = Date.now();
    const hit = this.cache.get(token);
    if (hit && hit.expiresAt > now) return this.allowed(hit.identity, request);
    const { kid } = decodeProtectedHeader(token);
    const scope = kid === undefined ? undefined : this.scoped.get(kid);
    if (kid !== undefined && !scope) throw new Error(`no scoped identity key named ${kid}`);
    const { payload } = await jwtVerify(token, scope ? scope.publicKey : this.keys.publicKey, {
      issuer: scope ? scopedIssuer(scope.id) : ISSUER,
      audience: this.audience,
      algorithms: [ALG],
    });
    const identity: VerifiedIdentity = {
      principal: PrincipalSchema.parse(payload.principal),
      ...(typeof payload.rid === "string" ? { requestId: payload.rid } : {}),
      ...(scope ? { signer: scope.id } : {}),
    };
    if (this.cache.size > 10_000) this.cache.clear();
    if (payload.exp) this.cache.set(token, { identity, expiresAt: payload.exp * 1000 });
    return this.allowed(identity, request);
  }

  /** A scoped signer's identity on a request outside its routes (or with no request named) is refused. */
  private allowed(identity: VerifiedIdentity, request: IdentityRequest | undefined): VerifiedIdentity {
    if (identity.signer === undefined) return identity;
    const scope = this.scoped.get(identity.signer) as ScopedIdentityKey;
    if (!request || !scopedRouteAllows(scope, request, identity.principal.type)) {
      throw new Error(`an identity signed by ${identity.signer} is not accepted on this request`);
    }
    return identity;
  }
}
