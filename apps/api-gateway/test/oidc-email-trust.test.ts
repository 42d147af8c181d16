import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OidcVerifier } from "../src/authn/oidc.ts";
import { configFromEnv } from "../src/config.ts";
import { call, type Harness, startHarness } from "./harness.ts";

const CLIENT_ID = "agentplane";
const CLIENT_SECRET = "gateway-secret";

/**
 * A bearer token's email is the address its user accepts invitations by. A provider that omits
 * `email_verified` may let users type any address (Entra ID's mutable `email`): by default
 * (OIDC_EMAIL_TRUST=verified) only an address the token vouches for counts; `present` takes any
 * the token does not mark unverified.
 */
describe("OIDC_EMAIL_TRUST at the gateway (local identity provider)", () => {
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  const harnesses: Harness[] = [];

  /** A gateway (and its own tenancy) reading the OIDC settings from `env`, and an org inviting `email`. */
  async function gatewayInviting(env: Record<string, string>, email: string) {
    const oidc = configFromEnv({ OIDC_ISSUER: provider.url, OIDC_AUDIENCE: CLIENT_ID, ...env }).oidc!;
    const h = await startHarness({ oidc: new OidcVerifier(oidc) });
    harnesses.push(h);
    const org = await call(h, "POST", "/v1/orgs", { body: { name: "Acme" } });
    const invited = await call(h, "POST", `/v1/orgs/${org.body.id}/invitations`, { body: { email, role: "admin" } });
    expect(invited.status).toBe(201);
    return { h, invitationId: invited.body.id as string };
  }

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
    await provider?.close();
  });

  it("by default, an email without email_verified opens nobody's invitation", async () => {
    const { h, invitationId } = await gatewayInviting({}, "vic@acme.test");
    provider.state.user = { sub: "mallory-1", email: "vic@acme.test", name: "Mallory" };
    const token = await provider.idToken();
    expect((await call(h, "GET", "/v1/invitations", { token })).body.items).toEqual([]);
    const accept = await call(h, "POST", `/v1/invitations/${invitationId}/accept`, { token });
    expect(accept.status).toBe(404);

    // The string "true" some providers send vouches for the address as the boolean does.
    provider.state.user = { sub: "vic-1", email: "vic@acme.test", emailVerified: "true", name: "Vic" };
    const vic = await provider.idToken();
    expect((await call(h, "POST", `/v1/invitations/${invitationId}/accept`, { token: vic })).status).toBe(200);
  });

  it("with OIDC_EMAIL_TRUST=present, takes an email without the claim, never one marked unverified", async () => {
    const { h, invitationId } = await gatewayInviting({ OIDC_EMAIL_TRUST: "present" }, "vic@acme.test");
    provider.state.user = { sub: "mallory-1", email: "vic@acme.test", emailVerified: false, name: "Mallory" };
    const typed = await provider.idToken();
    expect((await call(h, "POST", `/v1/invitations/${invitationId}/accept`, { token: typed })).status).toBe(404);

    provider.state.user = { sub: "vic-1", email: "vic@acme.test", name: "Vic" };
    const vic = await provider.idToken();
    expect((await call(h, "GET", "/v1/invitations", { token: vic })).body.items).toEqual([
      expect.objectContaining({ id: invitationId }),
    ]);
    expect((await call(h, "POST", `/v1/invitations/${invitationId}/accept`, { token: vic })).status).toBe(200);
  });

  it("a token that does not vouch for the user's stored address takes it away at once", async () => {
    const { h, invitationId } = await gatewayInviting({ OIDC_EMAIL_TRUST: "present" }, "una@acme.test");
    // Stored while the provider's tokens said nothing about it (as every token did before decision 0036).
    provider.state.user = { sub: "una-1", email: "una@acme.test", name: "Una" };
    const silent = await provider.idToken();
    expect((await call(h, "GET", "/v1/invitations", { token: silent })).body.items).toEqual([
      expect.objectContaining({ id: invitationId }),
    ]);
    provider.state.user = { sub: "una-1", email: "una@acme.test", emailVerified: false, name: "Una" };
    const unverified = await provider.idToken();
    expect((await call(h, "GET", "/v1/invitations", { token: unverified })).body.items).toEqual([]);
    expect((await call(h, "POST", `/v1/invitations/${invitationId}/accept`, { token: unverified })).status).toBe(404);
    // Gone from the user, not only from this token: the earlier token no longer opens it either.
    expect((await call(h, "GET", "/v1/invitations", { token: silent })).body.items).toEqual([]);
  });

  it("refuses to start on an unknown value, naming the variable and the allowed values", () => {
    expect(() => configFromEnv({ OIDC_ISSUER: provider.url, OIDC_EMAIL_TRUST: "anyone" })).toThrow(
      /OIDC_EMAIL_TRUST: must be verified or present/,
    );
  });
});
