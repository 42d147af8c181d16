import { requirePostgres } from "@agentplane/testkit";
import { decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CLUSTER_JWT_AUDIENCE } from "../../../packages/contracts/src/common/cluster-jwt.ts";
import { requestClaims } from "../../connections-svc/src/tunnel/protocol.ts";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { RequestVerifier } from "../src/verifier.ts";

const pg = await requirePostgres();
const encode = (s: string) => new TextEncoder().encode(s);

/**
 * What the relay checks on every request down its tunnel, against the real platform's JWKS
 * (fetched through the gateway with a cluster JWT): the signatures a hijacked tunnel could
 * send are refused.
 */
describe.skipIf(!pg.available)(`relay request verification by project JWKS${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let clusterId: string;
  let verifier: RequestVerifier;
  const sign = (projectId: string, claims: ReturnType<typeof requestClaims>, ttl = 60) =>
    h.connections.context.signer.sign(projectId, claims, ttl);
  const claims = (over: Partial<Parameters<typeof requestClaims>[0]> = {}) =>
    requestClaims({ clusterId, method: "GET", path: "/api/v1/pods", body: undefined, use: "kube", ...over });

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "edge" },
    });
    clusterId = created.body.id;
    const clusterJwt = await h.connections.context.signer.sign(
      h.projectId,
      { sub: clusterId, aud: CLUSTER_JWT_AUDIENCE },
      900,
    );
    verifier = new RequestVerifier({
      baseUrl: h.url,
      projectId: h.projectId,
      clusterId,
      // The relay reads the JWKS with its cluster JWT (the tunnel token only opens tunnels).
      bearer: () => clusterJwt,
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("accepts a request signed by the platform for exactly this method, path and body, once", async () => {
    const body = encode('{"metadata":{"name":"a"}}');
    const c = claims({ method: "POST", path: "/api/v1/namespaces/default/pods", body });
    const token = await sign(h.projectId, c);
    const ok = await verifier.verify({ token, method: "POST", path: "/api/v1/namespaces/default/pods", body });
    expect(ok.sub).toBe(clusterId);
    await expect(
      verifier.verify({ token, method: "POST", path: "/api/v1/namespaces/default/pods", body }),
    ).rejects.toThrow(/replayed/);
  });

  it("refuses a tampered body, method or path, and a control use of a Kubernetes signature", async () => {
    const body = encode('{"spec":{"replicas":1}}');
    const c = claims({ method: "PATCH", path: "/apis/apps/v1/namespaces/a/deployments/web", body });
    const token = await sign(h.projectId, c);
    await expect(
      verifier.verify({ token, method: "PATCH", path: c.htu, body: encode('{"spec":{"replicas":99}}') }),
    ).rejects.toThrow(/body differs/);
    const t2 = await sign(h.projectId, claims({ method: "GET", path: "/api/v1/secrets" }));
    await expect(
      verifier.verify({ token: t2, method: "DELETE", path: "/api/v1/secrets", body: new Uint8Array() }),
    ).rejects.toThrow(/method differs/);
    const t3 = await sign(h.projectId, claims({ path: "/api/v1/pods" }));
    await expect(
      verifier.verify({ token: t3, method: "GET", path: "/api/v1/secrets", body: new Uint8Array() }),
    ).rejects.toThrow(/path differs/);
    const t4 = await sign(h.projectId, claims({ path: "/agentplane/v1/tunnel-token", method: "PUT" }));
    await expect(
      verifier.verify({ token: t4, method: "PUT", path: "/agentplane/v1/tunnel-token", body: new Uint8Array() }),
    ).rejects.toThrow(/another use/);
  });

  it("refuses a forged signature that names the project's key id", async () => {
    const jwks = await h.call<{ keys: { kid: string }[] }>("GET", `/v1/projects/${h.projectId}/.well-known/jwks.json`, {
      token: h.viewerToken,
    });
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    expect((await exportJWK(publicKey)).kty).toBe("EC");
    const c = claims();
    const forged = await new SignJWT({ jti: c.jti, htm: c.htm, htu: c.htu, bh: c.bh, use: c.use })
      .setProtectedHeader({ alg: "ES256", kid: jwks.body.keys[0]!.kid })
      .setIssuer(`agentplane:project:${h.projectId}`)
      .setSubject(clusterId)
      .setAudience("agentplane-cluster-relay")
      .setIssuedAt()
      .setExpirationTime("30s")
      .sign(privateKey);
    await expect(
      verifier.verify({ token: forged, method: "GET", path: "/api/v1/pods", body: new Uint8Array() }),
    ).rejects.toThrow(/signature refused/);
  });

  it("refuses a request signed with another project's key, and one living longer than 60 s", async () => {
    const other = await sign(h.otherProjectId, claims());
    await expect(
      verifier.verify({ token: other, method: "GET", path: "/api/v1/pods", body: new Uint8Array() }),
    ).rejects.toThrow(/signature refused/);
    const long = await sign(h.projectId, claims(), 600);
    await expect(
      verifier.verify({ token: long, method: "GET", path: "/api/v1/pods", body: new Uint8Array() }),
    ).rejects.toThrow(/longer than 60 s/);
  });

  it("keeps verifying across a project key rotation (old key within its grace, new key fetched on sight)", async () => {
    const before = await sign(h.projectId, claims());
    const rotated = await h.call<{ kid: string }>("POST", `/v1/projects/${h.projectId}/rotate-keys`, {
      token: h.adminToken,
    });
    expect(rotated.status).toBe(200);
    // Tenancy keeps a project's decrypted key up to 5 s; once that lapses, tokens carry the new key id.
    let after = "";
    await vi.waitFor(
      async () => {
        after = await sign(h.projectId, claims());
        expect(decodeProtectedHeader(after).kid).toBe(rotated.body.kid);
      },
      { timeout: 20_000, interval: 250 },
    );
    expect(
      (await verifier.verify({ token: after, method: "GET", path: "/api/v1/pods", body: new Uint8Array() })).sub,
    ).toBe(clusterId);
    expect(
      (await verifier.verify({ token: before, method: "GET", path: "/api/v1/pods", body: new Uint8Array() })).sub,
    ).toBe(clusterId);
  });
});
