import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  principalOf,
  type Replica,
  serveReplica,
  startSecondReplica,
} from "../../connections-svc/test/fixtures/second-replica.ts";
import {
  type ConnectionsPlatform,
  type RelayProcess,
  startConnectionsPlatform,
  startRelayProcess,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { type KubeStandIn, kubeconfigFor, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

/**
 * Two connections replicas on one Postgres: the relay's tunnel lands on replica A (through the
 * gateway), proxy requests reach replica B, which finds the owner in the registry and forwards.
 */
describe.skipIf(!pg.available)(`cluster proxy across connections replicas${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let relay: RelayProcess;
  let a: Replica;
  let b: Replica;
  let clusterId: string;
  let member: Awaited<ReturnType<typeof principalOf>>;
  const proxyPath = () => `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/default/configmaps`;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    kube = await startKubeStandIn();
    kube.put("configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "seen-from-b", namespace: "default" },
      data: { replica: "a" },
    });
    // Replica A is the platform's own; its internal address goes into the registry with its tunnels.
    a = await serveReplica(h, h.connections, h.connections.context.config.replicaId);
    h.connections.context.config.replicaUrl = a.url;
    b = await startSecondReplica(h, "conn-replica-b");
    member = await principalOf(h, h.memberToken);
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "replicated" },
    });
    clusterId = created.body.id;
    relay = startRelayProcess({
      url: h.url,
      clusterId,
      tunnelToken: created.body.tunnelToken,
      kubeconfig: kubeconfigFor(kube),
    });
    await waitForClusterStatus(h, clusterId, "connected", { what: "the relay to connect", output: relay.output });
  });
  afterAll(async () => {
    await relay?.stop();
    await b?.close();
    await a?.close();
    await kube?.close();
    await h?.close();
  });

  it("B reports the tunnel held by A, and forwards a proxy request to it", async () => {
    const status = await b.fetchAs(member, `/v1/clusters/${clusterId}`);
    expect(status.status).toBe(200);
    expect(((await status.json()) as { replica: string }).replica).toBe(a.id);
    const before = kube.requests.length;
    const res = await b.fetchAs(member, proxyPath());
    expect(res.status, await res.clone().text()).toBe(200);
    const list = (await res.json()) as { kind: string; items: { metadata: { name: string } }[] };
    expect(list.kind).toBe("ConfigMapList");
    expect(list.items.map((i) => i.metadata.name)).toContain("seen-from-b");
    // It went B → A (the internal forward) → the tunnel → the relay → the API server.
    expect(a.seen.some((p) => p.includes("/forward/api/v1/namespaces/default/configmaps"))).toBe(true);
    expect(kube.requests.slice(before)).toContainEqual({
      method: "GET",
      path: "/api/v1/namespaces/default/configmaps",
      authorized: true,
    });
  });

  it("a write with a body goes through the forward as well", async () => {
    const res = await b.fetchAs(member, "/v1/clusters/" + clusterId + "/proxy/api/v1/namespaces/default/configmaps", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ metadata: { name: "made-on-b" }, data: { k: "v" } }),
    });
    expect(res.status).toBe(201);
    expect(kube.get("configmaps", "default", "made-on-b")?.data).toEqual({ k: "v" });
  });

  it("an owner entry past its heartbeat expiry is not followed: 503 cluster-disconnected; A's next heartbeat restores it", async () => {
    // What the registry holds when A stops renewing (a replica that died without closing its tunnels).
    await h.connections.context.db
      .updateTable("clusters")
      .set({ tunnel_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", clusterId)
      .execute();
    const forwardsBefore = a.seen.length;
    const res = await b.fetchAs(member, proxyPath());
    expect(res.status).toBe(503);
    const problem = (await res.json()) as { type: string };
    expect(problem.type).toMatch(/cluster-disconnected$/);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(a.seen.length).toBe(forwardsBefore);
    // A is alive: its next heartbeat (every CLUSTER_HEARTBEAT_MS) renews the entry and B forwards again.
    await waitFor(
      async () => (await b.fetchAs(member, proxyPath())).status === 200,
      h.connections.context.config.heartbeatMs + 10_000,
      "the heartbeat to renew the entry",
    );
  }, 40_000);

  it("when the relay goes away, A drops the entry and B answers 503 cluster-disconnected", async () => {
    await relay.stop();
    await waitFor(
      async () => (await b.fetchAs(member, proxyPath())).status === 503,
      15_000,
      "B to see the cluster disconnected",
    );
    const status = (await (await b.fetchAs(member, `/v1/clusters/${clusterId}`)).json()) as {
      status: string;
      replica?: string;
    };
    expect(status.status).toBe("disconnected");
    expect(status.replica).toBeUndefined();
  });
});
