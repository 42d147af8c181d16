import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { OidcConfig, ResolvedTenancyConfig } from "../context.ts";
import { open, seal } from "../crypto/secret-box.ts";
import type { OidcIdentity } from "./installation.ts";

/** Asymmetric algorithms only: `none` and HMAC (e.g. HS256 keyed with a public key) are refused. */
const ALLOWED_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** How long the operator has to sign in at the identity provider. */
const SIGN_IN_TTL_MS = 10 * 60 * 1000;
const COOKIE_CONTEXT = "oidc-activation";
const HTTP_TIMEOUT_MS = 10_000;

interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
}

/** What the browser carries between `/activate` and the callback: sealed, so it can be neither read nor forged. */
interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  userCode: string;
  orgName?: string | undefined;
  expiresAt: number;
}

/** Why a callback did not produce a verified identity; the page tells the operator to start again. */
export class SignInError extends Error {
  readonly status: 400 | 502;
  constructor(message: string, status: 400 | 502 = 400) {
    super(message);
    this.status = status;
  }
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");

function sameString(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Activation approval by signing in at the configured identity provider: the authorization code
 * flow with PKCE (S256), `state` and `nonce`. The state, nonce and code verifier travel in a sealed,
 * HttpOnly cookie bound to the browser that started the sign-in, so any replica can finish it and
 * a sign-in link sent to someone else cannot approve anything.
 */
export class OidcActivation {
  readonly issuer: string;
  readonly redirectUri: string;
  private readonly config: OidcConfig;
  private readonly secretKey: Uint8Array;
  private discovery: Promise<{ doc: DiscoveryDocument; jwks: ReturnType<typeof createRemoteJWKSet> }> | undefined;

  constructor(config: OidcConfig, tenancy: ResolvedTenancyConfig) {
    this.config = config;
    // Same normalization as the gateway, so the owner provisioned here is the user it finds later.
    this.issuer = config.issuer.replace(/\/+$/, "");
    this.redirectUri = config.redirectUri ?? `${tenancy.publicUrl}/activate/callback`;
    this.secretKey = tenancy.secretKey;
  }

  private load() {
    if (!this.discovery) {
      this.discovery = (async () => {
        const res = await fetch(`${this.issuer}/.well-known/openid-configuration`, {
          signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
        });
        if (!res.ok) throw new Error(`OIDC discovery answered ${res.status}`);
        const doc = (await res.json()) as DiscoveryDocument;
        if (typeof doc.issuer !== "string" || doc.issuer.replace(/\/+$/, "") !== this.issuer) {
          throw new Error("OIDC discovery names another issuer");
        }
        for (const key of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
          if (typeof doc[key] !== "string") throw new Error(`OIDC discovery has no ${key}`);
        }
        const jwks = createRemoteJWKSet(new URL(doc.jwks_uri), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
        return { doc, jwks };
      })();
      // A failed discovery is retried on the next sign-in rather than remembered.
      this.discovery.catch(() => {
        this.discovery = undefined;
      });
    }
    return this.discovery;
  }

  /** Where to send the browser, and the sealed cookie value that lets the callback finish the sign-in. */
  async begin(input: {
    userCode: string;
    orgName?: string | undefined;
  }): Promise<{ location: string; cookie: string }> {
    const { doc } = await this.load();
    const signIn: SignInState = {
      state: b64url(randomBytes(32)),
      nonce: b64url(randomBytes(32)),
      verifier: b64url(randomBytes(32)),
      userCode: input.userCode,
      ...(input.orgName ? { orgName: input.orgName } : {}),
      expiresAt: Date.now() + SIGN_IN_TTL_MS,
    };
    const url = new URL(doc.authorization_endpoint);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", this.config.clientId);
    url.searchParams.set("redirect_uri", this.redirectUri);
    url.searchParams.set("scope", "openid email profile");
    url.searchParams.set("state", signIn.state);
    url.searchParams.set("nonce", signIn.nonce);
    url.searchParams.set("code_challenge", b64url(createHash("sha256").update(signIn.verifier).digest()));
    url.searchParams.set("code_challenge_method", "S256");
    return { location: url.toString(), cookie: seal(this.secretKey, JSON.stringify(signIn), COOKIE_CONTEXT) };
  }

  /**
   * Checks the callback against the cookie (state), exchanges the code (PKCE verifier) and verifies
   * the ID token (signature by the issuer's JWKS, issuer, audience = client id, expiry, nonce).
   */
  async complete(input: {
    cookie: string | undefined;
    code: string | undefined;
    state: string | undefined;
  }): Promise<{ identity: OidcIdentity; userCode: string; orgName?: string | undefined }> {
    const signIn = this.openCookie(input.cookie);
    if (!input.state || !sameString(input.state, signIn.state)) {
      throw new SignInError("The sign-in does not match the one started from this browser.");
    }
    if (!input.code) throw new SignInError("The identity provider sent no authorization code.");
    const { doc, jwks } = await this.load().catch(() => {
      throw new SignInError("The identity provider cannot be reached.", 502);
    });
    const idToken = await this.exchange(doc, input.code, signIn.verifier);
    let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
    try {
      ({ payload } = await jwtVerify(idToken, jwks, {
        issuer: [this.issuer, `${this.issuer}/`],
        audience: this.config.clientId,
        algorithms: ALLOWED_ALGS,
        clockTolerance: 5,
        requiredClaims: ["sub", "exp", "iat"],
      }));
    } catch {
      throw new SignInError("The identity provider's ID token could not be verified.");
    }
    if (typeof payload.nonce !== "string" || !sameString(payload.nonce, signIn.nonce)) {
      throw new SignInError("The ID token was not issued for this sign-in.");
    }
    // OIDC Core 3.1.3.7: with several audiences, the token must have been issued to us.
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== this.config.clientId) {
      throw new SignInError("The ID token was issued to another client.");
    }
    if (typeof payload.sub !== "string" || payload.sub === "") throw new SignInError("The ID token has no subject.");
    const email = typeof payload.email === "string" && payload.email.length <= 320 ? payload.email : undefined;
    const name = typeof payload.name === "string" && payload.name.length <= 200 ? payload.name : undefined;
    return {
      identity: { issuer: this.issuer, subject: payload.sub, email, name },
      userCode: signIn.userCode,
      orgName: signIn.orgName,
    };
  }

  private openCookie(cookie: string | undefined): SignInState {
    if (!cookie) throw new SignInError("No sign-in was started from this browser, or it has expired.");
    let signIn: SignInState;
    try {
      signIn = JSON.parse(open(this.secretKey, cookie, COOKIE_CONTEXT).toString("utf8")) as SignInState;
    } catch {
      throw new SignInError("No sign-in was started from this browser, or it has expired.");
    }
    if (!(signIn.expiresAt > Date.now())) throw new SignInError("The sign-in took too long: start again.");
    return signIn;
  }

  private async exchange(doc: DiscoveryDocument, code: string, verifier: string): Promise<string> {
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: this.redirectUri,
      code_verifier: verifier,
    });
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    const secret = this.config.clientSecret;
    const methods = doc.token_endpoint_auth_methods_supported;
    if (secret && (!methods || methods.includes("client_secret_basic"))) {
      // RFC 6749 §2.3.1: both parts form-encoded before base64 (the default method of OIDC).
      const pair = `${encodeURIComponent(this.config.clientId)}:${encodeURIComponent(secret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
    } else {
      body.set("client_id", this.config.clientId);
      if (secret) body.set("client_secret", secret);
    }
    let res: Response;
    try {
      res = await fetch(doc.token_endpoint, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      });
    } catch {
      throw new SignInError("The identity provider cannot be reached.", 502);
    }
    const answer = (await res.json().catch(() => ({}))) as { id_token?: unknown };
    if (!res.ok) throw new SignInError("The identity provider refused the authorization code.");
    if (typeof answer.id_token !== "string") throw new SignInError("The identity provider returned no ID token.");
    return answer.id_token;
  }
}
