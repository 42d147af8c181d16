import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";

const pg = await requirePostgres();

type Who = "none" | "other" | "viewer" | "member" | "tunnel" | "cluster";

describe.skipIf(!pg.available)(`cluster routes: no token, another organization, too low a role${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let clusterId: string;
  let tunnelToken: string;
  let otherTunnelToken: string;
  let clusterJwt: string;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    const a = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "a" },
    });
    clusterId = a.body.id;
    tunnelToken = a.body.tunnelToken;
    const b = await h.call<{ tunnelToken: string }>("POST", `/v1/projects/${h.otherProjectId}/clusters`, {
      token: h.otherToken,
      body: { name: "b" },
    });
    otherTunnelToken = b.body.tunnelToken;
    clusterJwt = (await openTunnel(tunnelToken)).clusterJwt ?? "";
  });
  afterAll(async () => {
    await h?.close();
  });

  const token = (who: Who): string | null =>
    who === "none"
      ? null
      : who === "other"
        ? h.otherToken
        : who === "viewer"
          ? h.viewerToken
          : who === "member"
            ? h.memberToken
            : who === "tunnel"
              ? tunnelToken
              : clusterJwt;

  const routes: {
    name: string;
    method: string;
    path: () => string;
    body?: unknown;
    expect: Partial<Record<Who, number>>;
  }[] = [
    {
      name: "createCluster",
      method: "POST",
      path: () => `/v1/projects/${h.projectId}/clusters`,
      body: { name: "x" },
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 401, cluster: 403 },
    },
    {
      name: "listClusters",
      method: "GET",
      path: () => `/v1/projects/${h.projectId}/clusters`,
      expect: { none: 401, other: 404, cluster: 403 },
    },
    {
      name: "getCluster",
      method: "GET",
      path: () => `/v1/clusters/${clusterId}`,
      expect: { none: 401, other: 404, tunnel: 401 },
    },
    {
      name: "updateCluster",
      method: "PATCH",
      path: () => `/v1/clusters/${clusterId}`,
      body: { name: "y" },
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 401, cluster: 403 },
    },
    {
      name: "rotateClusterTunnelToken",
      method: "POST",
      path: () => `/v1/clusters/${clusterId}/rotate-tunnel-token`,
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 401, cluster: 403 },
    },
    {
      name: "clusterProxyGet",
      method: "GET",
      path: () => `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`,
      expect: { none: 401, other: 404, viewer: 403, tunnel: 401, cluster: 403 },
    },
    {
      name: "clusterProxyDelete",
      method: "DELETE",
      path: () => `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/default/pods/x`,
      expect: { none: 401, other: 404, viewer: 403 },
    },
    {
      name: "deleteCluster",
      method: "DELETE",
      path: () => `/v1/clusters/${clusterId}`,
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 401, cluster: 403 },
    },
  ];

  for (const route of routes) {
    for (const [who, status] of Object.entries(route.expect) as [Who, number][]) {
      it(`${route.name}: ${who} → ${status}`, async () => {
        const res = await h.call(route.method, route.path(), {
          token: token(who),
          ...(route.body ? { body: route.body } : {}),
        });
        expect(res.status).toBe(status);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
      });
    }
  }

  /** Opens (and drops) a tunnel; the 101 answer carries the relay's first cluster JWT. */
  function openTunnel(bearer: string | undefined): Promise<{ status: number; clusterJwt?: string }> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/clusters/${clusterId}/tunnel`, {
        headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
      });
      let jwt: string | undefined;
      ws.on("upgrade", (res) => {
        jwt = res.headers["x-agentplane-cluster-jwt"] as string | undefined;
      });
      ws.on("unexpected-response", (_req, res) => resolve({ status: res.statusCode ?? 0 }));
      ws.on("open", () => {
        ws.terminate();
        resolve({ status: 101, ...(jwt ? { clusterJwt: jwt } : {}) });
      });
      ws.on("error", () => {});
    });
  }

  it("the tunnel's upgrade answer carries a cluster JWT (ES256, project key, sub = cluster id) that reads the cluster and the JWKS", async () => {
    const [header, payload] = clusterJwt
      .split(".")
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, "base64url").toString()));
    expect(header.alg).toBe("ES256");
    expect(payload).toMatchObject({ sub: clusterId, iss: `agentplane:project:${h.projectId}` });
    expect(payload.exp - payload.iat).toBeLessThanOrEqual(900);
    const me = await h.call<{ type: string; id: string }>("GET", "/v1/auth/me", { token: clusterJwt });
    expect(me.body).toMatchObject({ type: "cluster", id: clusterId });
    expect((await h.call("GET", `/v1/clusters/${clusterId}`, { token: clusterJwt })).status).toBe(200);
    const jwks = await h.call<{ keys: { kid: string }[] }>("GET", `/v1/projects/${h.projectId}/.well-known/jwks.json`, {
      token: clusterJwt,
    });
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys.map((k) => k.kid)).toContain(header.kid);
    // The tunnel token is for the tunnel only.
    expect(
      (await h.call("GET", `/v1/projects/${h.projectId}/.well-known/jwks.json`, { token: tunnelToken })).status,
    ).toBe(401);
    // And a cluster JWT opens no tunnel.
    expect((await openTunnel(clusterJwt)).status).toBe(401);
  });

  it("openClusterTunnel: no token, an API token, another cluster's or a malformed tunnel token → 401", async () => {
    expect((await openTunnel(undefined)).status).toBe(401);
    expect((await openTunnel(h.adminToken)).status).toBe(401);
    expect((await openTunnel(otherTunnelToken)).status).toBe(401);
    expect((await openTunnel(`${tunnelToken.slice(0, -4)}0000`)).status).toBe(401);
  });
});
