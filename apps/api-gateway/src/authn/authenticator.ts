import {
  CLUSTER_JWT_AUDIENCE,
  internalProjectVerificationKeysRoute,
  internalResolveApiTokenRoute,
  internalResolveOidcUserRoute,
  type internalResolveSandboxTokenRoute,
  internalResolveSessionRoute,
  type internalResolveTunnelTokenRoute,
  type Principal,
  projectIdFromClusterIssuer,
  ResolvedPrincipal,
  ResolvedSession,
  TUNNEL_TOKEN_PREFIX,
  VerificationKeysResponse,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import {
  callInternal,
  type Logger,
  type ServiceClient,
  servicePrincipal,
  trustedOidcEmail,
  unvouchedOidcEmail,
} from "@agentplane/service-kit";
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from "jose";
import { LRUCache } from "lru-cache";
import { assertIssuedInPast, DEFAULT_MAX_CLOCK_SKEW_SECONDS, OidcUnavailableError, type OidcVerifier } from "./oidc.ts";
import { TokenCache } from "./token-cache.ts";

/** The internal routes that turn an opaque token into its principal: `{token}` in, `{principal}` out. */
export type TokenResolveRoute =
  | typeof internalResolveApiTokenRoute
  | typeof internalResolveSandboxTokenRoute
  | typeof internalResolveTunnelTokenRoute;

/** Opaque tokens whose prefix names the service that resolves them (e.g. sandbox tokens). */
export interface OpaqueTokenResolver {
  prefix: string;
  client: ServiceClient;
  route: TokenResolveRoute;
}

export interface AuthenticatorOptions {
  tenancy: ServiceClient;
  oidc?: OidcVerifier | undefined;
  opaqueResolvers?: OpaqueTokenResolver[];
  logger?: Logger;
  /** How long a resolved opaque token is trusted before asking again (revocation latency). */
  opaqueTtlMs?: number;
}

export class AuthenticationError extends ProblemError {
  constructor(detail: string) {
    super("unauthenticated", { detail, headers: { "www-authenticate": 'Bearer error="invalid_token"' } });
  }
}

/**
 * A dependency of authentication (tenancy, the identity provider) cannot be reached: the token may
 * well be valid, so the answer is a 503 to retry, never a 401 that makes clients drop the token.
 */
export class AuthenticationUnavailableError extends ProblemError {
  constructor(what: string) {
    super("service-unavailable", {
      detail: `${what} cannot be reached to verify the token; retry later`,
      headers: { "retry-after": String(AUTH_RETRY_AFTER_SECONDS) },
    });
  }
}

/** Seconds a client is told to wait when authentication's dependencies are down. */
export const AUTH_RETRY_AFTER_SECONDS = 5;

/** The ids a resolved principal stands for, any of which revoked ends it. */
function principalTags(p: Principal): (string | undefined)[] {
  return [p.id, p.userId, p.orgId, p.projectId, p.sessionId, p.sandboxId];
}

/** A failure of the callee that says the token is wrong (4xx), as opposed to the callee being down. */
function isRefusal(err: unknown): err is ProblemError {
  return err instanceof ProblemError && err.status >= 400 && err.status < 500;
}

/** What a revocation made this gateway forget: the id it names, or a signed-out session by its secret's hash. */
export type Forgotten = { id: string } | { sessionKey: string };

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const GATEWAY = servicePrincipal("api-gateway");

/**
 * A resolved credential is kept for a moment to spare tenancy a question per request, but never
 * past its own expiry: from then on it is forgotten and refused with `message`.
 */
function refuseExpired<T>(cache: TokenCache<T>, secret: string, expiresAtMs: number | undefined, message: string) {
  if (expiresAtMs !== undefined && !(expiresAtMs > Date.now())) {
    cache.forget(secret);
    throw new AuthenticationError(message);
  }
}

/** Turns a bearer token of any accepted kind into a principal, or throws a 401 problem. */
export class Authenticator {
  /** Resolved opaque tokens, with when each stops working (its expiry, when it has one). */
  private readonly opaque: TokenCache<{ principal: Principal; expiresAtMs?: number }>;
  private readonly sessions: TokenCache<ResolvedSession>;
  private readonly oidcUsers = new TokenCache<Principal>(60_000);
  /** Each project's published verification keys, for 30 s. */
  private readonly projectKeys = new LRUCache<string, Promise<JSONWebKeySet & { orgId: string }>>({
    max: 10_000,
    ttl: 30_000,
  });
  private readonly options: AuthenticatorOptions;
  /** Told of each credential forgotten on a revocation through this gateway, for the other replicas. */
  private announce: ((forgotten: Forgotten) => void) | undefined;

  constructor(options: AuthenticatorOptions) {
    this.options = options;
    this.opaque = new TokenCache(options.opaqueTtlMs ?? 2000, undefined, (r) => principalTags(r.principal));
    // A session is also filed under the sessions it was opened from: revoking one of them ends it.
    this.sessions = new TokenCache(options.opaqueTtlMs ?? 2000, undefined, (s) => [
      ...principalTags(s.principal),
      ...(s.ancestorSessionIds ?? []),
    ]);
  }

  /** A browser session's principal and CSRF token, from the session cookie's value. */
  async authenticateSession(secret: string): Promise<ResolvedSession> {
    const session = await this.sessions
      .get(secret, async () => {
        const body = await callInternal(this.options.tenancy, internalResolveSessionRoute, {
          principal: GATEWAY,
          body: { secret },
        });
        return ResolvedSession.parse(body);
      })
      .catch((err) => {
        if (isRefusal(err)) throw new AuthenticationError("The session is not valid; sign in again");
        throw new AuthenticationUnavailableError("The tenancy service");
      });
    const expiresAtMs = session.expiresAt === undefined ? undefined : Date.parse(session.expiresAt);
    refuseExpired(this.sessions, secret, expiresAtMs, "The session is not valid; sign in again");
    return session;
  }

  /**
   * Forgets a session at once (signed out through this gateway), and with `sessionId` the sessions
   * opened from it, which the sign-out ended too; the other replicas are told by the hash of its
   * secret and its id (`onForget`), else forget them within the cache's lifetime.
   */
  forgetSession(secret: string, sessionId?: string): void {
    const sessionKey = TokenCache.keyOf(secret);
    this.sessions.forgetKey(sessionKey);
    this.announce?.({ sessionKey });
    if (sessionId) this.forgetRevoked(sessionId);
  }

  /**
   * Forgets at once every resolved token and session that names this id: a token, session, user,
   * organization or project revoked or removed through this gateway. The other replicas are told
   * (`onForget`), else forget it within the cache's lifetime.
   */
  forgetRevoked(id: string): void {
    this.forgetHere({ id });
    this.announce?.({ id });
  }

  /** What another replica forgot: forgotten here too, and told to no one. */
  forgetHere(forgotten: Forgotten): void {
    if ("id" in forgotten) {
      this.opaque.forgetTagged(forgotten.id);
      this.sessions.forgetTagged(forgotten.id);
    } else {
      this.sessions.forgetKey(forgotten.sessionKey);
    }
  }

  /** Who is told of what a revocation through this gateway made it forget (one listener; none: undefined). */
  onForget(listener: ((forgotten: Forgotten) => void) | undefined): void {
    this.announce = listener;
  }

  /**
   * `tunnel`: the request opens a cluster's tunnel, the one place a tunnel token is accepted; the
   * relay's own calls to `/v1` carry its cluster JWT.
   */
  async authenticate(token: string, options: { tunnel?: boolean } = {}): Promise<Principal> {
    if (!token) {
      throw new AuthenticationError("A bearer token is required: send the header Authorization: Bearer <token>");
    }
    if (token.startsWith(TUNNEL_TOKEN_PREFIX) && !options.tunnel) {
      throw new AuthenticationError("A tunnel token only opens its cluster's tunnel");
    }
    if (JWT_SHAPE.test(token)) return this.authenticateJwt(token);
    const resolver = this.options.opaqueResolvers?.find((r) => token.startsWith(r.prefix));
    if (resolver) return this.resolveOpaque(token, resolver.client, resolver.route);
    return this.resolveOpaque(token, this.options.tenancy, internalResolveApiTokenRoute);
  }

  private async resolveOpaque(token: string, client: ServiceClient, route: TokenResolveRoute): Promise<Principal> {
    const resolved = await this.opaque
      .get(token, async () => {
        const body = ResolvedPrincipal.parse(
          await callInternal(client, route as typeof internalResolveApiTokenRoute, {
            principal: GATEWAY,
            body: { token },
          }),
        );
        return {
          principal: body.principal,
          ...(body.expiresAt ? { expiresAtMs: Date.parse(body.expiresAt) } : {}),
        };
      })
      .catch((err) => {
        if (isRefusal(err)) throw new AuthenticationError("The token is not valid");
        throw new AuthenticationUnavailableError(`The ${client.service} service`);
      });
    refuseExpired(this.opaque, token, resolved.expiresAtMs, "The token is not valid");
    return resolved.principal;
  }

  private async authenticateJwt(token: string): Promise<Principal> {
    let claims: ReturnType<typeof decodeJwt>;
    try {
      claims = decodeJwt(token);
    } catch {
      throw new AuthenticationError("The token is not a valid JWT");
    }
    const issuer = typeof claims.iss === "string" ? claims.iss : "";
    const projectId = projectIdFromClusterIssuer(issuer);
    if (projectId) return this.authenticateCluster(token, projectId);
    const oidc = this.options.oidc;
    if (oidc && issuer.replace(/\/+$/, "") === oidc.issuer) return this.authenticateOidc(token, oidc);
    throw new AuthenticationError("The token's issuer is not trusted");
  }

  private async authenticateOidc(token: string, oidc: OidcVerifier): Promise<Principal> {
    let verified: Awaited<ReturnType<OidcVerifier["verify"]>>;
    try {
      verified = await oidc.verify(token);
    } catch (err) {
      if (err instanceof OidcUnavailableError) {
        this.options.logger?.warn({ reason: err.message }, "OIDC provider unreachable");
        throw new AuthenticationUnavailableError("The identity provider");
      }
      this.options.logger?.debug({ reason: (err as Error).message }, "OIDC token rejected");
      throw new AuthenticationError("The token is not valid");
    }
    // Only an address the token vouches for (OIDC_EMAIL_TRUST): invitations go by it. One it
    // carries without vouching for it takes the same stored address away.
    const email = trustedOidcEmail(verified, oidc.emailTrust);
    const unverifiedEmail = unvouchedOidcEmail(verified, oidc.emailTrust);
    // A token naming another address reaches tenancy at once, not when the cached user expires.
    const key = [oidc.issuer, verified.sub, email ?? "", unverifiedEmail ?? ""].join("\u0000");
    return this.oidcUsers
      .get(key, async () => {
        const body = await callInternal(this.options.tenancy, internalResolveOidcUserRoute, {
          principal: GATEWAY,
          body: {
            issuer: oidc.issuer,
            subject: verified.sub,
            ...(email ? { email } : {}),
            ...(unverifiedEmail ? { unverifiedEmail } : {}),
            ...(typeof verified.name === "string" ? { name: verified.name } : {}),
          },
        });
        return ResolvedPrincipal.parse(body).principal;
      })
      .catch((err) => {
        if (isRefusal(err)) throw err;
        throw new AuthenticationUnavailableError("The tenancy service");
      });
  }

  private keysOf(projectId: string, refresh: boolean): Promise<JSONWebKeySet & { orgId: string }> {
    const hit = refresh ? undefined : this.projectKeys.get(projectId);
    if (hit) return hit;
    const value = callInternal(this.options.tenancy, internalProjectVerificationKeysRoute, {
      principal: GATEWAY,
      params: { projectId },
    }).then((body) => {
      const parsed = VerificationKeysResponse.parse(body);
      return { keys: parsed.keys as JSONWebKeySet["keys"], orgId: parsed.orgId };
    });
    this.projectKeys.set(projectId, value);
    value.catch(() => {
      if (this.projectKeys.peek(projectId) === value) this.projectKeys.delete(projectId);
    });
    return value;
  }

  private async authenticateCluster(token: string, projectId: string, refreshed = false): Promise<Principal> {
    let jwks: JSONWebKeySet & { orgId: string };
    try {
      jwks = await this.keysOf(projectId, refreshed);
    } catch (err) {
      if (isRefusal(err)) throw new AuthenticationError("The token's project is unknown");
      throw new AuthenticationUnavailableError("The tenancy service");
    }
    try {
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
        algorithms: ["ES256"],
        audience: CLUSTER_JWT_AUDIENCE,
        clockTolerance: 5,
      });
      assertIssuedInPast(payload, DEFAULT_MAX_CLOCK_SKEW_SECONDS);
      if (typeof payload.sub !== "string") throw new Error("no subject");
      return { type: "cluster", id: payload.sub, displayName: payload.sub, projectId, orgId: jwks.orgId };
    } catch (err) {
      // A key rotated since we cached the JWKS: look once more before refusing.
      if (!refreshed && (err as { code?: string }).code === "ERR_JWKS_NO_MATCHING_KEY") {
        return this.authenticateCluster(token, projectId, true);
      }
      throw new AuthenticationError("The token is not valid");
    }
  }
}

/**
 * The bearer token of a request: the Authorization header, or on a WebSocket upgrade only, the
 * Kubernetes subprotocol convention (browsers cannot set headers on a WebSocket). A plain HTTP
 * request never has its token read from `Sec-WebSocket-Protocol`.
 */
export function bearerToken(headers: Pick<Headers, "get">, options: { websocket?: boolean } = {}): string | undefined {
  const auth = headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    return m ? m[1]!.trim() : undefined;
  }
  const protocols = options.websocket ? headers.get("sec-websocket-protocol") : null;
  if (protocols) {
    for (const p of protocols.split(",").map((s) => s.trim())) {
      if (p.startsWith("base64url.bearer.authorization.k8s.io.")) {
        const encoded = p.slice("base64url.bearer.authorization.k8s.io.".length);
        try {
          return Buffer.from(encoded, "base64url").toString("utf8");
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}
