import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type ConnectionsPlatform, startConnectionsPlatform } from "../../platform/test/connections-harness.ts";

const pg = await requirePostgres();

type Who = "none" | "other" | "viewer" | "member" | "tunnel";

describe.skipIf(!pg.available)(`cluster routes: no token, another organization, too low a role${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let clusterId: string;
  let tunnelToken: string;
  let otherTunnelToken: string;

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
            : tunnelToken;

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
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 403 },
    },
    {
      name: "listClusters",
      method: "GET",
      path: () => `/v1/projects/${h.projectId}/clusters`,
      expect: { none: 401, other: 404 },
    },
    { name: "getCluster", method: "GET", path: () => `/v1/clusters/${clusterId}`, expect: { none: 401, other: 404 } },
    {
      name: "updateCluster",
      method: "PATCH",
      path: () => `/v1/clusters/${clusterId}`,
      body: { name: "y" },
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 403 },
    },
    {
      name: "rotateClusterTunnelToken",
      method: "POST",
      path: () => `/v1/clusters/${clusterId}/rotate-tunnel-token`,
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 403 },
    },
    {
      name: "clusterProxyGet",
      method: "GET",
      path: () => `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`,
      expect: { none: 401, other: 404, viewer: 403, tunnel: 403 },
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
      expect: { none: 401, other: 404, viewer: 403, member: 403, tunnel: 403 },
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

  const openTunnel = (bearer: string | undefined): Promise<number> =>
    new Promise((resolve) => {
      const ws = new WebSocket(`${h.url.replace("http", "ws")}/v1/clusters/${clusterId}/tunnel`, {
        headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
      });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => {
        ws.terminate();
        resolve(101);
      });
      ws.on("error", () => {});
    });

  it("openClusterTunnel: no token, an API token, another cluster's or a malformed tunnel token → 401", async () => {
    expect(await openTunnel(undefined)).toBe(401);
    expect(await openTunnel(h.adminToken)).toBe(401);
    expect(await openTunnel(otherTunnelToken)).toBe(401);
    expect(await openTunnel(`${tunnelToken.slice(0, -4)}0000`)).toBe(401);
  });
});
