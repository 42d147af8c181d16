import { requirePostgres } from "@agentplane/testkit";
import { type CryptoKey, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CLUSTER_JWT_AUDIENCE } from "../../../packages/contracts/src/common/cluster-jwt.ts";
import { DELEGATION_AUDIENCE, requestClaims } from "../../connections-svc/src/tunnel/protocol.ts";
import { TunnelRequestSigner } from "../../connections-svc/src/tunnel/request-signer.ts";
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

  const GET = { method: "GET", path: "/api/v1/pods", body: new Uint8Array() };
  const tunnelSigner = (projectId = h.projectId, forCluster = clusterId) =>
    new TunnelRequestSigner({ signer: h.connections.context.signer, projectId, clusterId: forCluster });
  /** A certificate as tenancy issues it, for a key of the test's choosing. */
  const certify = async (publicKey: CryptoKey, ttl: number) =>
    h.connections.context.signer.sign(
      h.projectId,
      { sub: clusterId, aud: DELEGATION_AUDIENCE, jti: crypto.randomUUID(), cnf: { jwk: await exportJWK(publicKey) } },
      ttl,
    );
  const signWith = (privateKey: CryptoKey, c: ReturnType<typeof requestClaims>, exp: string | number = "30s") =>
    new SignJWT(c)
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(`agentplane:project:${h.projectId}`)
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(privateKey);

  it("delegated key: a request signed with the tunnel's key, certified by the project key, verifies once, exactly", async () => {
    const signer = tunnelSigner();
    const body = encode('{"metadata":{"name":"b"}}');
    const path = "/api/v1/namespaces/default/configmaps";
    const signed = await signer.sign(claims({ method: "POST", path, body }));
    expect(decodeProtectedHeader(signed.delegation).kid).not.toBe(decodeProtectedHeader(signed.jwt).kid);
    const ok = await verifier.verify({ token: signed.jwt, delegation: signed.delegation, method: "POST", path, body });
    expect(ok.sub).toBe(clusterId);
    await expect(
      verifier.verify({ token: signed.jwt, delegation: signed.delegation, method: "POST", path, body }),
    ).rejects.toThrow(/replayed/);
    const again = await signer.sign(claims({ method: "POST", path, body }));
    expect(again.delegation).toBe(signed.delegation);
    await expect(
      verifier.verify({ ...again, token: again.jwt, method: "POST", path, body: encode("{}") }),
    ).rejects.toThrow(/body differs/);
    await expect(verifier.verify({ ...again, token: again.jwt, method: "PUT", path, body })).rejects.toThrow(
      /method differs/,
    );
    // Without its certificate, the delegated key is no key of the project's.
    const bare = await signer.sign(claims());
    await expect(verifier.verify({ token: bare.jwt, ...GET })).rejects.toThrow(/signature refused/);
  });

  it("delegated key: refuses another cluster's or project's certificate, a forged one, and a key it does not name", async () => {
    const other = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "elsewhere" },
    });
    const forOther = await tunnelSigner(h.projectId, other.body.id).sign(claims());
    await expect(verifier.verify({ token: forOther.jwt, delegation: forOther.delegation, ...GET })).rejects.toThrow(
      /delegation refused/,
    );
    const otherProject = await tunnelSigner(h.otherProjectId).sign(claims());
    await expect(
      verifier.verify({ token: otherProject.jwt, delegation: otherProject.delegation, ...GET }),
    ).rejects.toThrow(/delegation refused/);
    // A certificate forged with an attacker's key under the project's key id.
    const jwks = await h.call<{ keys: { kid: string }[] }>("GET", `/v1/projects/${h.projectId}/.well-known/jwks.json`, {
      token: h.viewerToken,
    });
    const attacker = await generateKeyPair("ES256");
    const forged = await new SignJWT({ jti: "x", cnf: { jwk: await exportJWK(attacker.publicKey) } })
      .setProtectedHeader({ alg: "ES256", kid: jwks.body.keys[0]!.kid })
      .setIssuer(`agentplane:project:${h.projectId}`)
      .setSubject(clusterId)
      .setAudience(DELEGATION_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(attacker.privateKey);
    const byAttacker = await signWith(attacker.privateKey, claims());
    await expect(verifier.verify({ token: byAttacker, delegation: forged, ...GET })).rejects.toThrow(
      /delegation refused/,
    );
    // A genuine certificate beside a JWT signed with a key it does not name.
    const genuine = await tunnelSigner().sign(claims());
    await expect(verifier.verify({ token: byAttacker, delegation: genuine.delegation, ...GET })).rejects.toThrow(
      /signature refused/,
    );
    // Project-signed tokens of other audiences are no certificates (a request JWT, a cluster JWT).
    const requestJwt = await sign(h.projectId, claims());
    const clusterJwt = await h.connections.context.signer.sign(
      h.projectId,
      { sub: clusterId, aud: CLUSTER_JWT_AUDIENCE },
      900,
    );
    for (const notACertificate of [requestJwt, clusterJwt]) {
      await expect(verifier.verify({ token: genuine.jwt, delegation: notACertificate, ...GET })).rejects.toThrow(
        /delegation refused/,
      );
    }
  });

  it("delegated key: refuses a certificate living over an hour and a request outliving its certificate", async () => {
    const mine = await generateKeyPair("ES256", { extractable: true });
    const long = await certify(mine.publicKey, 7200);
    await expect(
      verifier.verify({ token: await signWith(mine.privateKey, claims()), delegation: long, ...GET }),
    ).rejects.toThrow(/longer than an hour/);
    const brief = await certify(mine.publicKey, 20);
    await expect(
      verifier.verify({ token: await signWith(mine.privateKey, claims(), "50s"), delegation: brief, ...GET }),
    ).rejects.toThrow(/outlives its delegation/);
    expect(
      (await verifier.verify({ token: await signWith(mine.privateKey, claims(), "10s"), delegation: brief, ...GET }))
        .sub,
    ).toBe(clusterId);
  });

  it("keeps verifying across a project key rotation (old key within its grace, new key fetched on sight)", async () => {
    const before = await sign(h.projectId, claims());
    const delegatedBefore = await tunnelSigner().sign(claims());
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
    // Certificates too: one signed with the old key still holds, a new tunnel's is signed with the new key.
    expect(
      (await verifier.verify({ token: delegatedBefore.jwt, delegation: delegatedBefore.delegation, ...GET })).sub,
    ).toBe(clusterId);
    const delegatedAfter = await tunnelSigner().sign(claims());
    expect(decodeProtectedHeader(delegatedAfter.delegation).kid).toBe(rotated.body.kid);
    expect(
      (await verifier.verify({ token: delegatedAfter.jwt, delegation: delegatedAfter.delegation, ...GET })).sub,
    ).toBe(clusterId);
  });
});
