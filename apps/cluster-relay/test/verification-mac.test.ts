import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import { requirePostgres } from "@agentplane/testkit";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLUSTER_JWT_AUDIENCE } from "../../../packages/contracts/src/common/cluster-jwt.ts";
import { DELEGATION_AUDIENCE, requestClaims } from "../../connections-svc/src/tunnel/protocol.ts";
import { TunnelRequestSigner } from "../../connections-svc/src/tunnel/request-signer.ts";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";
import { agreementKeyOf, RelayAgreement } from "../src/mac.ts";
import { RequestVerifier } from "../src/verifier.ts";

const pg = await requirePostgres();
const encode = (s: string) => new TextEncoder().encode(s);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/**
 * MAC'd request JWTs (docs/decisions/0008-tunnel-request-mac.md) against the real platform's
 * JWKS: once the tunnel's signer has the relay's key-agreement key, requests carry an HS256 MAC
 * with the key the certificate's `kex` and the relay's key agree on. The refusals of signed
 * requests hold for MAC'd ones, and a tunnel that swapped the relay's key gains nothing.
 */
describe.skipIf(!pg.available)(`relay verification of MAC'd requests${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let clusterId: string;
  let verifier: RequestVerifier;
  let clusterJwt: string;
  const relay = new RelayAgreement();
  const GET = { method: "GET", path: "/api/v1/pods", body: new Uint8Array() };
  const claims = (over: Partial<Parameters<typeof requestClaims>[0]> = {}) =>
    requestClaims({ clusterId, method: "GET", path: "/api/v1/pods", body: undefined, use: "kube", ...over });
  const tunnelSigner = (relayKey: unknown = relay.publicJwk, projectId = h.projectId, forCluster = clusterId) => {
    const signer = new TunnelRequestSigner({ signer: h.connections.context.signer, projectId, clusterId: forCluster });
    signer.acceptRelayKey(relayKey);
    return signer;
  };
  /** An HS256 JWT over any payload, MAC'd with `key`. */
  const macJwt = (payload: Record<string, unknown>, key: KeyObject) => {
    const input = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(payload)}`;
    return `${input}.${createHmac("sha256", key).update(input).digest("base64url")}`;
  };
  /** The MAC key of a certificate as `agreement`'s holder derives it. */
  const keyOf = (agreement: RelayAgreement, certificate: string) =>
    agreement.macKey(agreementKeyOf(decodeJwt(certificate).kex)!, clusterId);

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "edge" },
    });
    clusterId = created.body.id;
    clusterJwt = await h.connections.context.signer.sign(
      h.projectId,
      { sub: clusterId, aud: CLUSTER_JWT_AUDIENCE },
      900,
    );
    verifier = new RequestVerifier({
      baseUrl: h.url,
      projectId: h.projectId,
      clusterId,
      bearer: () => clusterJwt,
      agreement: relay,
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("accepts a MAC'd request for exactly this method, path and body, once", async () => {
    const signer = tunnelSigner();
    const body = encode('{"metadata":{"name":"m"}}');
    const path = "/api/v1/namespaces/default/configmaps";
    const signed = await signer.sign(claims({ method: "POST", path, body }));
    expect(decodeProtectedHeader(signed.jwt).alg).toBe("HS256");
    const ok = await verifier.verify({ token: signed.jwt, delegation: signed.delegation, method: "POST", path, body });
    expect(ok).toMatchObject({ sub: clusterId, htm: "POST", htu: path, use: "kube" });
    await expect(
      verifier.verify({ token: signed.jwt, delegation: signed.delegation, method: "POST", path, body }),
    ).rejects.toThrow(/replayed/);
    const again = await signer.sign(claims({ method: "POST", path, body }));
    const check = (over: Partial<{ method: string; path: string; body: Uint8Array }>) =>
      verifier.verify({ token: again.jwt, delegation: again.delegation, method: "POST", path, body, ...over });
    await expect(check({ body: encode("{}") })).rejects.toThrow(/body differs/);
    await expect(check({ method: "PUT" })).rejects.toThrow(/method differs/);
    await expect(check({ path: "/api/v1/namespaces/default/secrets" })).rejects.toThrow(/path differs/);
    const control = await signer.sign(claims({ method: "PUT", path: "/agentplane/v1/tunnel-token" }));
    await expect(
      verifier.verify({
        token: control.jwt,
        delegation: control.delegation,
        ...GET,
        method: "PUT",
        path: "/agentplane/v1/tunnel-token",
      }),
    ).rejects.toThrow(/another use/);
    // A tampered MAC, and a MAC'd JWT without the certificate its key comes from.
    const [hd, pl, mac] = again.jwt.split(".") as [string, string, string];
    const flipped = `${hd}.${pl}.${mac.slice(0, -2)}${mac.endsWith("AA") ? "BA" : "AA"}`;
    await expect(check({ token: flipped } as never)).rejects.toThrow(/signature refused/);
    await expect(verifier.verify({ token: again.jwt, method: "POST", path, body })).rejects.toThrow(
      /signature refused/,
    );
  });

  it("a tunnel that swapped the relay's key, or another relay, cannot make requests this relay accepts", async () => {
    // The hijacker named its own key: the platform's MACs are made with a key the hijacker knows …
    const hijacker = new RelayAgreement();
    const fooled = await tunnelSigner(hijacker.publicJwk).sign(claims());
    expect(decodeProtectedHeader(fooled.jwt).alg).toBe("HS256");
    // … and neither those nor what the hijacker MACs with that key are accepted here.
    await expect(verifier.verify({ token: fooled.jwt, delegation: fooled.delegation, ...GET })).rejects.toThrow(
      /signature refused/,
    );
    const iat = Math.floor(Date.now() / 1000);
    const forged = macJwt(
      { ...claims(), iss: `agentplane:project:${h.projectId}`, iat, exp: iat + 30 },
      keyOf(hijacker, fooled.delegation),
    );
    await expect(verifier.verify({ token: forged, delegation: fooled.delegation, ...GET })).rejects.toThrow(
      /signature refused/,
    );
    // Another relay (another process's agreement key) cannot verify this tunnel's requests either.
    const mine = await tunnelSigner().sign(claims());
    const elsewhere = new RequestVerifier({
      baseUrl: h.url,
      projectId: h.projectId,
      clusterId,
      bearer: () => clusterJwt,
      agreement: new RelayAgreement(),
    });
    await expect(elsewhere.verify({ token: mine.jwt, delegation: mine.delegation, ...GET })).rejects.toThrow(
      /signature refused/,
    );
    // A relay without an agreement key refuses every MAC'd request.
    const keyless = new RequestVerifier({
      baseUrl: h.url,
      projectId: h.projectId,
      clusterId,
      bearer: () => clusterJwt,
    });
    const fresh = await tunnelSigner().sign(claims());
    await expect(keyless.verify({ token: fresh.jwt, delegation: fresh.delegation, ...GET })).rejects.toThrow(
      /no MAC key is agreed/,
    );
  });

  it("refuses another cluster's or project's certificate, and one that names no key-agreement key", async () => {
    const other = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "elsewhere" },
    });
    const forOther = await tunnelSigner(relay.publicJwk, h.projectId, other.body.id).sign(claims());
    await expect(verifier.verify({ token: forOther.jwt, delegation: forOther.delegation, ...GET })).rejects.toThrow(
      /delegation refused/,
    );
    const otherProject = await tunnelSigner(relay.publicJwk, h.otherProjectId).sign(claims());
    await expect(
      verifier.verify({ token: otherProject.jwt, delegation: otherProject.delegation, ...GET }),
    ).rejects.toThrow(/delegation refused/);
    // A genuine certificate without `kex` (as an older platform issues): no MAC key, whatever the guess.
    const { publicKey } = await generateKeyPair("ES256", { extractable: true });
    const noKex = await h.connections.context.signer.sign(
      h.projectId,
      { sub: clusterId, aud: DELEGATION_AUDIENCE, jti: crypto.randomUUID(), cnf: { jwk: await exportJWK(publicKey) } },
      300,
    );
    const iat = Math.floor(Date.now() / 1000);
    const guessed = macJwt(
      { ...claims(), iss: `agentplane:project:${h.projectId}`, iat, exp: iat + 30 },
      createSecretKey(Buffer.alloc(32)),
    );
    await expect(verifier.verify({ token: guessed, delegation: noKex, ...GET })).rejects.toThrow(
      /no MAC key is agreed/,
    );
  });

  it("checks a MAC'd JWT's claims: issuer, audience, subject, expiry, lifetime, and its certificate's end", async () => {
    const signed = await tunnelSigner().sign(claims());
    const key = keyOf(relay, signed.delegation);
    const certificateEnd = decodeJwt(signed.delegation).exp!;
    const iat = Math.floor(Date.now() / 1000);
    const base = { ...claims(), iss: `agentplane:project:${h.projectId}`, iat, exp: iat + 30 };
    expect((await verifier.verify({ token: macJwt(base, key), delegation: signed.delegation, ...GET })).sub).toBe(
      clusterId,
    );
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...base, jti: "a1", iss: `agentplane:project:${h.otherProjectId}` }, /"iss"/],
      [{ ...base, jti: "a2", aud: CLUSTER_JWT_AUDIENCE }, /"aud"/],
      [{ ...base, jti: "a3", sub: "cls_other" }, /"sub"/],
      [{ ...base, jti: "a4", iat: iat - 120, exp: iat - 60 }, /"exp"/],
      [{ ...base, jti: "a5", exp: iat + 600 }, /longer than 60 s|outlives/],
      [{ ...base, jti: undefined }, /required/],
      [{ ...base, jti: "a6", iat: certificateEnd - 30, exp: certificateEnd + 10 }, /outlives its delegation/],
    ];
    for (const [payload, reason] of cases) {
      await expect(
        verifier.verify({ token: macJwt(payload, key), delegation: signed.delegation, ...GET }),
      ).rejects.toThrow(reason);
    }
  });
});
