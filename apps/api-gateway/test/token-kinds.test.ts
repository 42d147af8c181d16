import { CLUSTER_JWT_AUDIENCE, clusterJwtIssuer } from "@agentplane/contracts";
import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signClusterJwt } from "../../tenancy-svc/test/fixtures/cluster-jwt.ts";
import { OidcVerifier } from "../src/authn/oidc.ts";
import { call, type Harness, startHarness } from "./harness.ts";

describe("cluster JWTs through the gateway", () => {
  let h: Harness;
  let projectId: string;

  beforeAll(async () => {
    h = await startHarness();
    const org = await call(h, "POST", "/v1/orgs", { body: { name: "Clusters" } });
    const project = await call(h, "POST", `/v1/orgs/${org.body.id}/projects`, { body: { name: "edge" } });
    projectId = project.body.id as string;
  });
  afterAll(() => h.close());

  it("accepts a token signed with the project's current key as a cluster identity", async () => {
    const token = await signClusterJwt(h.tenancy, projectId, "cl_edge_1");
    const me = await call(h, "GET", "/v1/auth/me", { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ type: "cluster", id: "cl_edge_1" });
    // A relay reads its project's keys, and nothing else of the project: it runs on the
    // customer's infrastructure.
    expect((await call(h, "GET", `/v1/projects/${projectId}/.well-known/jwks.json`, { token })).status).toBe(200);
    for (const path of [
      `/v1/projects/${projectId}`,
      `/v1/projects/${projectId}/clusters`,
      `/v1/projects/${projectId}/sandboxes`,
    ]) {
      const refused = await call(h, "GET", path, { token });
      expect(refused.status, path).toBe(403);
      expect(refused.body.detail).toMatch(/only its own cluster/);
    }
    expect((await call(h, "POST", `/v1/projects/${projectId}/rotate-keys`, { token })).status).toBe(403);
  });

  it("keeps accepting the previous key after a rotation (grace period) and accepts the new one", async () => {
    const before = await signClusterJwt(h.tenancy, projectId, "cl_edge_2");
    expect((await call(h, "POST", `/v1/projects/${projectId}/rotate-keys`)).status).toBe(200);
    const after = await signClusterJwt(h.tenancy, projectId, "cl_edge_2");
    expect((await call(h, "GET", "/v1/auth/me", { token: before })).status).toBe(200);
    expect((await call(h, "GET", "/v1/auth/me", { token: after })).status).toBe(200);
  });

  it("refuses a token signed by a key the project never published, or for another audience", async () => {
    const stranger = await generateKeyPair("ES256");
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "key_unknown" })
      .setIssuer(clusterJwtIssuer(projectId))
      .setSubject("cl_forged")
      .setAudience(CLUSTER_JWT_AUDIENCE)
      .setExpirationTime("5m")
      .sign(stranger.privateKey);
    expect((await call(h, "GET", "/v1/auth/me", { token: forged })).status).toBe(401);
    const unknownProject = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "key_x" })
      .setIssuer(clusterJwtIssuer("prj_does_not_exist"))
      .setSubject("cl_x")
      .setAudience(CLUSTER_JWT_AUDIENCE)
      .setExpirationTime("5m")
      .sign(stranger.privateKey);
    expect((await call(h, "GET", "/v1/auth/me", { token: unknownProject })).status).toBe(401);
  });
});

describe("OIDC JWTs through the gateway", () => {
  let idp: LocalServer;
  let h: Harness;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  let jwk: JWK;

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256", { extractable: true });
    privateKey = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: "idp-1", alg: "ES256" };
    idp = await startLocalServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration")
        res.end(JSON.stringify({ issuer: idp.url, jwks_uri: `${idp.url}/keys` }));
      else res.end(JSON.stringify({ keys: [jwk] }));
    });
    h = await startHarness({ oidc: new OidcVerifier({ issuer: idp.url, audience: "agentplane" }) });
  });
  afterAll(async () => {
    await h.close();
    await idp.close();
  });

  const idToken = (sub: string, aud = "agentplane", claims: Record<string, unknown> = {}) =>
    new SignJWT({ email: `${sub}@example.com`, name: `User ${sub}`, ...claims })
      .setProtectedHeader({ alg: "ES256", kid: "idp-1" })
      .setIssuer(idp.url)
      .setAudience(aud)
      .setSubject(sub)
      .setExpirationTime("5m")
      .sign(privateKey);

  it("provisions the user on first sight and finds the same user again", async () => {
    const first = await call(h, "GET", "/v1/auth/me", { token: await idToken("alice") });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ type: "user", displayName: "User alice" });
    const again = await call(h, "GET", "/v1/auth/me", { token: await idToken("alice") });
    expect(again.body.id).toBe(first.body.id);
    const other = await call(h, "GET", "/v1/auth/me", { token: await idToken("bob") });
    expect(other.body.id).not.toBe(first.body.id);
  });

  it("lets a provisioned user create an organization and refuses a token for another audience", async () => {
    const token = await idToken("carol");
    expect((await call(h, "POST", "/v1/orgs", { token, body: { name: "Carol's" } })).status).toBe(201);
    expect((await call(h, "GET", "/v1/auth/me", { token: await idToken("carol", "other-app") })).status).toBe(401);
  });

  it("does not take an email the provider has not verified: it opens nobody's invitation", async () => {
    const owner = await idToken("erin");
    const org = await call(h, "POST", "/v1/orgs", { token: owner, body: { name: "Erin's" } });
    const invited = await call(h, "POST", `/v1/orgs/${org.body.id}/invitations`, {
      token: owner,
      body: { email: "frank@example.com", role: "admin" },
    });
    expect(invited.status).toBe(201);
    const typed = await idToken("mallory", "agentplane", { email: "frank@example.com", email_verified: false });
    expect((await call(h, "GET", "/v1/invitations", { token: typed })).body.items).toEqual([]);
    const verified = await idToken("frank", "agentplane", { email_verified: true });
    expect((await call(h, "GET", "/v1/invitations", { token: verified })).body.items).toEqual([
      expect.objectContaining({ id: invited.body.id }),
    ]);
  });
});
