import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BuiltGateway,
  buildGateway,
  GatewayEnvSchema,
  gatewayConfigFromEnv,
  httpTargets,
  serviceUrls,
} from "@agentplane/api-gateway";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { parseEnv, type RunningServer, serveFetch, silentLogger } from "@agentplane/service-kit";
import { tenancyConfigFromEnv } from "@agentplane/tenancy-svc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOidcProvider } from "../../tenancy-svc/test/fixtures/oidc-provider.ts";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

const CLIENT_ID = "agentplane-cp";
const CLIENT_SECRET = "composition-secret";
const REDIRECT_URI = "https://cp.example.test/activate/callback";

/** An ID token of the provider, through its authorization code flow (PKCE), as a client gets one. */
async function idToken(providerUrl: string): Promise<string> {
  const verifier = randomBytes(32).toString("base64url");
  const redirectUri = "http://127.0.0.1:1/cb";
  const authorize = new URL(`${providerUrl}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: redirectUri,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    nonce: "n1",
    state: "s1",
  })) {
    authorize.searchParams.set(k, v);
  }
  const back = await fetch(authorize, { redirect: "manual" });
  const code = new URL(back.headers.get("location")!).searchParams.get("code")!;
  const token = await fetch(`${providerUrl}/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    }),
  });
  return ((await token.json()) as { id_token: string }).id_token;
}

describe("the all-in-one and the distributed gateway: one builder, one configuration", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-composition-"));
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let database: Database;
  let platform: Platform;
  let tenancyServer: RunningServer;
  let distributed: BuiltGateway;
  let distributedServer: RunningServer;
  let settings: Record<string, string>;

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    // The operator's settings, the same variables for both modes.
    settings = {
      OIDC_ISSUER: provider.url,
      OIDC_AUDIENCE: CLIENT_ID,
      OIDC_MAX_CLOCK_SKEW_SECONDS: "7",
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_REDIRECT_URI: REDIRECT_URI,
      OIDC_EMAIL_TRUST: "present",
      RATE_LIMIT_PER_MINUTE: "77",
      PUBLIC_URL: "https://cp.example.test",
      AGENT_RUNTIME_TIMEOUT_MS: "45000",
      TRUSTED_PROXIES: "10.0.0.0/8",
    };
    database = await openDatabase("pglite://memory");
    const env = AllInOneEnvSchema.parse({
      ...settings,
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
    // The distributed gateway as its main builds it, in front of the same tenancy served on its own port.
    tenancyServer = await serveFetch((req) => platform.services.tenancy!.fetch(req), {
      port: 0,
      hostname: "127.0.0.1",
    });
    const gatewayEnv = {
      ...settings,
      PORT: "0",
      INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(platform.keys.privateJwk),
      TENANCY_URL: tenancyServer.url,
    };
    const parsed = parseEnv(GatewayEnvSchema, gatewayEnv);
    distributed = buildGateway({
      config: gatewayConfigFromEnv(gatewayEnv),
      targets: httpTargets(serviceUrls(parsed)),
      keys: platform.keys,
      bus: new MemoryBus(),
      logger: silentLogger(),
    });
    distributedServer = await serveFetch((req, nodeEnv) => distributed.fetch(req, nodeEnv), {
      port: 0,
      hostname: "127.0.0.1",
    });
  }, 240_000);
  afterAll(async () => {
    await distributedServer?.close();
    distributed?.close();
    await tenancyServer?.close();
    await platform?.close();
    await database?.close();
    await provider?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("builds both from the gateway's own settings, OIDC, rate limit and proxies included", () => {
    expect(platform.gateway.config).toEqual(distributed.config);
    expect(distributed.config).toEqual({
      publicUrl: "https://cp.example.test",
      oidc: { issuer: provider.url, audience: CLIENT_ID, maxClockSkewSeconds: 7, emailTrust: "present" },
      rateLimitPerMinute: 77,
      agentRuntimeTimeoutMs: 45_000,
      trustedProxies: "10.0.0.0/8",
    });
  });

  it("both accept the identity provider's token for the configured audience and apply the same limit", async () => {
    const token = await idToken(provider.url);
    for (const url of [platform.url, distributedServer.url]) {
      const res = await fetch(`${url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, url).toBe(200);
      expect(res.headers.get("ratelimit-policy")).toContain("q=77");
    }
  });

  it("tenancy reads OIDC_REDIRECT_URI the same way in both modes: sign-in redirects there", async () => {
    const secretKey = randomBytes(32);
    expect(tenancyConfigFromEnv(settings, { secretKey }).oidc).toMatchObject({
      redirectUri: REDIRECT_URI,
      emailTrust: "present",
    });
    const session = (await (await fetch(`${platform.url}/v1/installation/activation`, { method: "POST" })).json()) as {
      userCode: string;
    };
    for (const url of [platform.url, distributedServer.url]) {
      const res = await fetch(`${url}/activate`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          userCode: session.userCode,
          setupCode: platform.setupCode!,
          method: "oidc",
          orgName: "Acme",
        }).toString(),
      });
      expect(res.status, url).toBe(303);
      expect(new URL(res.headers.get("location")!).searchParams.get("redirect_uri")).toBe(REDIRECT_URI);
    }
  });
});
