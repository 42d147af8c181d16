import { createHash, randomBytes } from "node:crypto";
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT } from "jose";
import { readBody, startLocalServer } from "../http.ts";

export interface ProviderUser {
  sub: string;
  email?: string;
  /**
   * Sent as the `email_verified` claim when set (providers that let anyone type an email say false;
   * some send the claim as a string); left out when unset, as providers that never verify do.
   */
  emailVerified?: boolean | "true" | "false";
  name?: string;
}

/** Changes the next ID tokens so a test can check that the relying party refuses them. */
export interface Tamper {
  nonce?: string;
  aud?: string;
  /** Sign with a key the JWKS does not publish. */
  foreignKey?: boolean;
}

/**
 * A minimal OpenID provider on 127.0.0.1 (port 0) that the unchanged `openid-client` signs in
 * against: discovery, an authorization endpoint that signs
 * the user in at once and redirects back with a code, a token endpoint that checks the client
 * secret (Basic), the redirect URI and the PKCE verifier before issuing an ES256 ID token, and a JWKS.
 */
export async function startOidcProvider(options: { clientId: string; clientSecret: string }) {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const foreign = await generateKeyPair("ES256");
  const kid = "test-key-1";
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const codes = new Map<string, { nonce: string; challenge: string; redirectUri: string }>();
  const state = {
    user: { sub: "operator-1", email: "ops@acme.test", emailVerified: true, name: "Olga Operator" } as ProviderUser,
    tamper: {} as Tamper,
    authorizeRequests: [] as URLSearchParams[],
    tokenRequests: 0,
  };

  const sign = (claims: Record<string, unknown>, key: CryptoKey) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid })
      .setIssuer(server.url)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(key);

  const server = await startLocalServer(async (req, res): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/.well-known/openid-configuration") {
      return json(200, {
        issuer: server.url,
        authorization_endpoint: `${server.url}/authorize`,
        token_endpoint: `${server.url}/token`,
        jwks_uri: `${server.url}/jwks`,
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
        code_challenge_methods_supported: ["S256"],
        // Required by OpenID Connect Discovery; a relying party refuses ID tokens signed otherwise.
        id_token_signing_alg_values_supported: ["ES256"],
      });
    }
    if (url.pathname === "/jwks") return json(200, { keys: [jwk] });
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      state.authorizeRequests.push(q);
      if (q.get("response_type") !== "code" || q.get("client_id") !== options.clientId) {
        return json(400, { error: "invalid_request" });
      }
      if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge") || !q.get("nonce")) {
        return json(400, { error: "invalid_request" });
      }
      const code = randomBytes(16).toString("hex");
      codes.set(code, {
        nonce: q.get("nonce")!,
        challenge: q.get("code_challenge")!,
        redirectUri: q.get("redirect_uri")!,
      });
      const back = new URL(q.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state") ?? "");
      res.writeHead(302, { location: back.toString() });
      res.end();
      return;
    }
    if (url.pathname === "/token" && req.method === "POST") {
      state.tokenRequests++;
      const form = new URLSearchParams(await readBody(req));
      // RFC 6749 §2.3.1: id and secret are form-encoded before being put in the Basic credentials.
      const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
      const [id, secret] = basic.split(":").map((part) => decodeURIComponent(part.replace(/\+/g, " ")));
      if (id !== options.clientId || secret !== options.clientSecret) return json(401, { error: "invalid_client" });
      const grant = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      if (form.get("grant_type") !== "authorization_code" || !grant) return json(400, { error: "invalid_grant" });
      if (form.get("redirect_uri") !== grant.redirectUri) return json(400, { error: "invalid_grant" });
      const verifier = form.get("code_verifier") ?? "";
      if (createHash("sha256").update(verifier).digest("base64url") !== grant.challenge) {
        return json(400, { error: "invalid_grant", error_description: "PKCE verification failed" });
      }
      const { tamper, user } = state;
      const idToken = await sign(
        {
          sub: user.sub,
          aud: tamper.aud ?? options.clientId,
          nonce: tamper.nonce ?? grant.nonce,
          ...(user.email ? { email: user.email } : {}),
          ...(user.emailVerified !== undefined ? { email_verified: user.emailVerified } : {}),
          ...(user.name ? { name: user.name } : {}),
        },
        tamper.foreignKey ? foreign.privateKey : privateKey,
      );
      return json(200, { access_token: "opaque", token_type: "Bearer", expires_in: 300, id_token: idToken });
    }
    json(404, { error: "not_found" });
  });

  /**
   * An ID token for the current user, got as a client gets one (authorization code + PKCE at these
   * endpoints), for a relying party that takes it as a bearer token.
   */
  async function idToken(): Promise<string> {
    const verifier = randomBytes(32).toString("base64url");
    const redirectUri = "http://127.0.0.1:1/callback";
    const authorize = new URL(`${server.url}/authorize`);
    authorize.search = new URLSearchParams({
      response_type: "code",
      client_id: options.clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      nonce: randomBytes(8).toString("hex"),
      state: "state",
    }).toString();
    const back = await fetch(authorize, { redirect: "manual" });
    const code = new URL(back.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const basic = `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`;
    const res = await fetch(`${server.url}/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(basic).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    if (!res.ok) throw new Error(`the token endpoint answered ${res.status}`);
    return ((await res.json()) as { id_token: string }).id_token;
  }

  return { url: server.url, state, idToken, close: () => server.close() };
}
