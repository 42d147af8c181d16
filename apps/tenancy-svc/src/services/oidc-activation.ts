import { timingSafeEqual } from "node:crypto";
import { SIGN_IN_ERRORS, type SignInErrorCode } from "@agentplane/contracts/sign-in-errors";
import { trustedOidcEmail, unvouchedOidcEmail } from "@agentplane/service-kit";
import { decodeProtectedHeader } from "jose";
import * as oidc from "openid-client";
import { type OidcConfig, type ResolvedTenancyConfig, secretKeysOf } from "../config.ts";
import { open, type SecretKeys, seal } from "../crypto/secret-box.ts";

/** Asymmetric algorithms only: `none` and HMAC (e.g. HS256 keyed with a public key) are refused. */
const ALLOWED_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** How long the operator has to sign in at the identity provider. */
const SIGN_IN_TTL_MS = 10 * 60 * 1000;
const COOKIE_CONTEXT = "oidc-activation";
const HTTP_TIMEOUT_SECONDS = 10;

/** What the browser carries between `/activate` and the callback: sealed, so it can be neither read nor forged. */
interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  /** What the purpose of the sign-in needs afterwards (the activation's user code, the console's page). */
  carried: Record<string, string>;
  expiresAt: number;
}

/** Why a callback did not produce a verified identity; the page tells the operator to start again. */
export class SignInError extends Error {
  readonly status: 400 | 502;
  /** The console's sign-in page shows the words of this code (it never takes words from its address). */
  readonly code: SignInErrorCode;
  constructor(code: Exclude<SignInErrorCode, "failed">, status: 400 | 502 = 400) {
    super(SIGN_IN_ERRORS[code]);
    this.code = code;
    this.status = status;
  }
}

function sameString(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The client authentication the provider accepts: Basic when it can (the default of OIDC), else the form. */
function clientAuthFor(server: oidc.ServerMetadata, clientSecret: string | undefined): oidc.ClientAuth {
  if (!clientSecret) return oidc.None();
  const methods = server.token_endpoint_auth_methods_supported;
  return !methods || methods.includes("client_secret_basic")
    ? oidc.ClientSecretBasic(clientSecret)
    : oidc.ClientSecretPost(clientSecret);
}

/** The claim an openid-client validation failure is about (`nonce`, `aud`, …), when it names one. */
function failedClaim(err: unknown): string | undefined {
  const cause = (err as { cause?: { cause?: { claim?: unknown } } }).cause?.cause;
  return typeof cause?.claim === "string" ? cause.claim : undefined;
}

/** An openid-client failure of the code exchange, as what the operator is told. */
function signInFailure(err: unknown): SignInError {
  if (err instanceof oidc.ResponseBodyError) {
    return new SignInError("code_refused");
  }
  if (err instanceof oidc.ClientError) {
    if (err.code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED" && failedClaim(err) === "nonce") {
      return new SignInError("not_for_this_sign_in");
    }
    if (err.code === "OAUTH_RESPONSE_IS_NOT_CONFORM" || err.code === "OAUTH_RESPONSE_IS_NOT_JSON") {
      return new SignInError("code_refused");
    }
    return new SignInError("token_unverified");
  }
  // fetch failures and timeouts
  return new SignInError("provider_unreachable", 502);
}

/** A verified identity-provider sign-in (issuer, subject and profile from the ID token). */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email?: string | undefined;
  /** The address the token carries without vouching for it (see `unvouchedOidcEmail`). */
  unverifiedEmail?: string | undefined;
  name?: string | undefined;
}

/**
 * Activation approval by signing in at the configured identity provider, with `openid-client`:
 * discovery, the authorization code flow with PKCE (S256), `state` and `nonce`, and the ID token
 * validated (issuer, audience and `azp`, expiry, nonce) with its signature checked against the
 * issuer's JWKS. The state, nonce and code verifier travel in a sealed, HttpOnly cookie bound to
 * the browser that started the sign-in, so any replica can finish it and a sign-in link sent to
 * someone else cannot approve anything.
 *
 * An `http:` issuer is accepted because the operator configured it explicitly (a provider on the
 * same host or a private network, and the tests' local provider); openid-client allows plain HTTP
 * only through `allowInsecureRequests`, which is applied for such an issuer alone. An `https:`
 * issuer never makes or accepts a plain HTTP request.
 */
export class OidcActivation {
  readonly issuer: string;
  readonly redirectUri: string;
  private readonly config: OidcConfig;
  private readonly secretKeys: SecretKeys;
  private discovered: Promise<oidc.Configuration> | undefined;

  constructor(config: OidcConfig, tenancy: ResolvedTenancyConfig) {
    this.config = config;
    // Same normalization as the gateway, so the owner provisioned here is the user it finds later.
    this.issuer = config.issuer.replace(/\/+$/, "");
    this.redirectUri = config.redirectUri ?? `${tenancy.publicUrl}/activate/callback`;
    this.secretKeys = secretKeysOf(tenancy);
  }

  private load(): Promise<oidc.Configuration> {
    if (!this.discovered) {
      this.discovered = (async () => {
        const insecure = new URL(this.issuer).protocol === "http:";
        const execute = [oidc.enableNonRepudiationChecks, ...(insecure ? [oidc.allowInsecureRequests] : [])];
        const found = await oidc.discovery(new URL(this.issuer), this.config.clientId, undefined, undefined, {
          execute,
          timeout: HTTP_TIMEOUT_SECONDS,
        });
        // The client authentication depends on what the provider announced.
        const server = found.serverMetadata();
        const configuration = new oidc.Configuration(
          server,
          this.config.clientId,
          this.config.clientSecret,
          clientAuthFor(server, this.config.clientSecret),
        );
        configuration.timeout = HTTP_TIMEOUT_SECONDS;
        for (const apply of execute) apply(configuration);
        return configuration;
      })();
      // A failed discovery is retried on the next sign-in rather than remembered.
      this.discovered.catch(() => {
        this.discovered = undefined;
      });
    }
    return this.discovered;
  }

  /** Where to send the browser, and the sealed cookie value that lets the callback finish the sign-in. */
  async begin(input: {
    userCode: string;
    /** Checked already; carried sealed so the approval checks it again under its locks. */
    setupCode: string;
    orgName?: string | undefined;
  }): Promise<{ location: string; cookie: string }> {
    return this.beginSignIn(
      {
        userCode: input.userCode,
        setupCode: input.setupCode,
        ...(input.orgName ? { orgName: input.orgName } : {}),
      },
      this.redirectUri,
      COOKIE_CONTEXT,
    );
  }

  /**
   * Checks the callback against the cookie (state) before anything is sent to the provider, then
   * exchanges the code (PKCE verifier) and validates the ID token.
   */
  async complete(input: {
    cookie: string | undefined;
    /** The callback's query: `code`, `state` and, from providers that send it, `iss`. */
    params: URLSearchParams;
  }): Promise<{ identity: OidcIdentity; userCode: string; setupCode: string; orgName?: string | undefined }> {
    const done = await this.completeSignIn<{ userCode: string; setupCode?: string; orgName?: string }>(
      input.cookie,
      input.params,
      this.redirectUri,
      COOKIE_CONTEXT,
    );
    // A sign-in begun before setup codes were carried has none: the approval refuses it.
    return {
      identity: done.identity,
      userCode: done.carried.userCode,
      setupCode: done.carried.setupCode ?? "",
      orgName: done.carried.orgName,
    };
  }

  /**
   * The same sign-in for another purpose (the console's): `carried` travels sealed with the state,
   * the provider sends the browser back to `redirectUri`, and `context` keeps one purpose's cookie
   * from completing another's.
   */
  async beginSignIn(
    carried: Record<string, string>,
    redirectUri: string,
    context: string,
  ): Promise<{ location: string; cookie: string }> {
    const configuration = await this.load();
    const signIn: SignInState = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      carried,
      expiresAt: Date.now() + SIGN_IN_TTL_MS,
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: "openid email profile",
      state: signIn.state,
      nonce: signIn.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(signIn.verifier),
      code_challenge_method: "S256",
    });
    return { location: url.href, cookie: seal(this.secretKeys.current, JSON.stringify(signIn), context) };
  }

  async completeSignIn<T extends Record<string, string | undefined>>(
    cookie: string | undefined,
    params: URLSearchParams,
    redirectUri: string,
    context: string,
  ): Promise<{ identity: OidcIdentity; carried: T }> {
    const signIn = this.openCookie(cookie, context);
    const state = params.get("state");
    if (!state || !sameString(state, signIn.state)) {
      throw new SignInError("other_browser");
    }
    if (!params.get("code")) throw new SignInError("no_code");
    const configuration = await this.load().catch(() => {
      throw new SignInError("provider_unreachable", 502);
    });
    const callback = new URL(redirectUri);
    callback.search = params.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: signIn.verifier,
        expectedState: signIn.state,
        expectedNonce: signIn.nonce,
      });
    } catch (err) {
      throw signInFailure(err);
    }
    const claims = tokens.claims();
    if (!tokens.id_token || !claims) throw new SignInError("no_id_token");
    if (!ALLOWED_ALGS.includes(decodeProtectedHeader(tokens.id_token).alg ?? "")) {
      throw new SignInError("token_unverified");
    }
    if (typeof claims.sub !== "string" || claims.sub === "") throw new SignInError("no_subject");
    // Only an address the token vouches for (OIDC_EMAIL_TRUST): invitations go by it.
    const trust = this.config.emailTrust ?? "verified";
    const email = trustedOidcEmail(claims, trust);
    const unverifiedEmail = unvouchedOidcEmail(claims, trust);
    const name = typeof claims.name === "string" && claims.name.length <= 200 ? claims.name : undefined;
    return {
      identity: { issuer: this.issuer, subject: claims.sub, email, unverifiedEmail, name },
      carried: signIn.carried as T,
    };
  }

  private openCookie(cookie: string | undefined, context: string): SignInState {
    if (!cookie) throw new SignInError("not_started");
    let signIn: SignInState;
    try {
      signIn = JSON.parse(open(this.secretKeys, cookie, context).toString("utf8")) as SignInState;
    } catch {
      throw new SignInError("not_started");
    }
    if (!(signIn.expiresAt > Date.now())) throw new SignInError("too_slow");
    return signIn;
  }
}
