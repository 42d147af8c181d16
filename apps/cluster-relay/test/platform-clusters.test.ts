import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { requirePostgres } from "@agentplane/testkit";
import { CoreV1Api, PatchStrategy, setHeaderOptions, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindProjectPolicy } from "../../connections-svc/test/fixtures/governance-policy.ts";
import {
  type ConnectionsPlatform,
  type RelayProcess,
  startConnectionsPlatform,
  startRelayProcess,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { tunnelUpgradeStatus, waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { type KubeStandIn, kubeconfigFor, proxyKubeConfig, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

/** Kubernetes through the proxy is open but for deleting pods in `prod` and watching `kube-system` (real Cedar, enforced). */
const CLUSTER_POLICY = `
@id("allow-everything-else")
permit(principal, action, resource);

@id("no-pod-deletes-in-prod")
forbid(principal, action == Action::"cluster:delete", resource)
when { context has resource && context.resource == "pods" && context has namespace && context.namespace == "prod" };

@id("no-watching-kube-system")
forbid(principal, action == Action::"cluster:watch", resource)
when { context has namespace && context.namespace == "kube-system" };
`;

/** A raw request whose path is sent exactly as written (no client-side normalization). */
function rawGet(url: string, path: string, token: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, method: "GET", headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe.skipIf(!pg.available)(`clusters through a real relay process${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let relay: RelayProcess;
  let clusterId: string;
  let tunnelToken: string;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    await bindProjectPolicy(h, "cluster-access", CLUSTER_POLICY);
    kube = await startKubeStandIn();
  });
  afterAll(async () => {
    await relay?.stop();
    await kube?.close();
    await h?.close();
  });

  it("registers a cluster with its tunnel token shown once, pending until a relay connects", async () => {
    const created = await h.call<{ id: string; tunnelToken: string; status: string }>(
      "POST",
      `/v1/projects/${h.projectId}/clusters`,
      { token: h.adminToken, body: { name: "prod-eu", labels: { env: "prod" } } },
    );
    expect(created.status).toBe(201);
    expect(created.body.tunnelToken).toMatch(/^apct_ctt_/);
    expect(created.body.status).toBe("pending");
    clusterId = created.body.id;
    tunnelToken = created.body.tunnelToken;
    const got = await h.call<Record<string, unknown>>("GET", `/v1/clusters/${clusterId}`, { token: h.viewerToken });
    expect(got.status).toBe(200);
    expect(got.body.tunnelToken).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(tunnelToken.slice(-20));
    const pending = await h.call<{ items: { id: string }[] }>(
      "GET",
      `/v1/projects/${h.projectId}/clusters?status=pending`,
      { token: h.viewerToken },
    );
    expect(pending.body.items.map((c) => c.id)).toContain(clusterId);
  });

  it("answers 503 cluster-disconnected while no relay is connected", async () => {
    const res = await h.call("GET", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`, { token: h.memberToken });
    expect(res.status).toBe(503);
    expect(String(res.body.type)).toMatch(/cluster-disconnected$/);
  });

  it("a relay process connects; status shows connected, relay and Kubernetes versions, the replica", async () => {
    relay = startRelayProcess({ url: h.url, clusterId, tunnelToken, kubeconfig: kubeconfigFor(kube) });
    const cluster = await waitFor(
      async () => {
        const r = await h.call<Record<string, string>>("GET", `/v1/clusters/${clusterId}`, { token: h.viewerToken });
        return r.body.status === "connected" && r.body.kubernetesVersion ? r.body : undefined;
      },
      25_000,
      "the relay to connect",
    ).catch(async (err) => {
      const last = await h.call("GET", `/v1/clusters/${clusterId}`, { token: h.viewerToken });
      throw new Error(`${(err as Error).message}: ${JSON.stringify(last.body)}; relay output:\n${relay.output()}`);
    });
    expect(cluster.kubernetesVersion).toBe("v1.31.0-standin");
    expect(cluster.relayVersion).toBe("0.1.0");
    expect(cluster.replica).toBe(h.connections.context.config.replicaId);
    expect(cluster.lastHeartbeatAt).toBeTruthy();
  });

  it("@kubernetes/client-node lists, creates, patches, reads and deletes through the proxy", async () => {
    const core = proxyKubeConfig(h.url, clusterId, h.memberToken).makeApiClient(CoreV1Api);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toEqual(expect.arrayContaining(["default", "kube-system"]));
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "settings" }, data: { mode: "a" } },
    });
    const patched = await core.patchNamespacedConfigMap(
      { name: "settings", namespace: "default", body: { data: { mode: "b", extra: "1" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect(patched.data).toEqual({ mode: "b", extra: "1" });
    expect((await core.readNamespacedConfigMap({ name: "settings", namespace: "default" })).data?.mode).toBe("b");
    await core.createNamespacedPod({
      namespace: "default",
      body: { metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "nginx" }] } },
    });
    expect((await core.listNamespacedPod({ namespace: "default" })).items.map((p) => p.metadata?.name)).toContain(
      "web",
    );
    await core.deleteNamespacedPod({ name: "web", namespace: "default" });
    expect(kube.get("pods", "default", "web")).toBeUndefined();
    // The relay called the API server with its own credential, never the caller's token.
    expect(kube.requests.every((r) => r.authorized)).toBe(true);
  });

  it("answers small bodies whole and larger ones streamed (the stand-in sends both chunked), byte for byte either way", async () => {
    const big = "x".repeat(200 * 1024);
    kube.put("configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big", namespace: "default" },
      data: { big },
    });
    kube.put("configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "small", namespace: "default" },
      data: { s: "1" },
    });
    for (const [name, bytes] of [
      ["big", big.length],
      ["small", 1],
    ] as const) {
      const res = await fetch(`${h.url}/v1/clusters/${clusterId}/proxy/api/v1/namespaces/default/configmaps/${name}`, {
        headers: { authorization: `Bearer ${h.memberToken}` },
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      const direct = kube.get("configmaps", "default", name);
      expect(JSON.parse(text)).toEqual(direct);
      expect(Object.values((JSON.parse(text) as { data: Record<string, string> }).data)[0]).toHaveLength(bytes);
    }
  });

  it("a watch streams events as they happen and a client abort cancels it upstream", async () => {
    const kc = proxyKubeConfig(h.url, clusterId, h.memberToken);
    const events: string[] = [];
    const watch = new Watch(kc);
    const controller = await watch.watch(
      "/api/v1/namespaces/default/configmaps",
      {},
      (phase, obj: { metadata?: { name?: string } }) => events.push(`${phase} ${obj.metadata?.name}`),
      () => {},
    );
    await waitFor(() => kube.openWatches() === 1, 10_000, "the watch to reach the stand-in");
    await waitFor(() => events.includes("ADDED settings"), 10_000, "the initial event");
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "live" } } });
    await waitFor(() => events.includes("ADDED live"), 10_000, "the live event");
    await core.deleteNamespacedConfigMap({ name: "live", namespace: "default" });
    await waitFor(() => events.includes("DELETED live"), 10_000, "the delete event");
    controller.abort();
    await waitFor(() => kube.openWatches() === 0, 10_000, "the upstream watch to be cancelled");
    // The same list as a watch is the verb `watch`: refused where the policy forbids watching.
    const refused = await h.call(
      "GET",
      `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/kube-system/pods?watch=true`,
      {
        token: h.memberToken,
      },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.ruleId).toBe("no-watching-kube-system");
    // The API server reads any watch value but 0 and false (any case) as a watch, an empty one too.
    for (const value of ["True", "yes", "t", ""]) {
      const spelled = await h.call(
        "GET",
        `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/kube-system/pods?watch=${value}`,
        { token: h.memberToken },
      );
      expect(spelled.status, `watch=${value}`).toBe(403);
    }
    const listed = await h.call("GET", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/kube-system/pods`, {
      token: h.memberToken,
    });
    expect(listed.status).toBe(200);
  });

  it("policy denies deleting pods in one namespace only, naming the rule; the denial is audited", async () => {
    kube.put("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "db", namespace: "prod" } });
    kube.put("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "db", namespace: "staging" } });
    const denied = await h.call("DELETE", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/prod/pods/db`, {
      token: h.memberToken,
    });
    expect(denied.status).toBe(403);
    expect(String(denied.body.type)).toMatch(/policy-denied$/);
    expect(denied.body.ruleId).toBe("no-pod-deletes-in-prod");
    expect(kube.get("pods", "prod", "db")).toBeDefined();
    const allowed = await h.call("DELETE", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/staging/pods/db`, {
      token: h.memberToken,
    });
    expect(allowed.status).toBe(200);
    expect(kube.get("pods", "staging", "db")).toBeUndefined();
    // The record travels outbox → bus → audit-svc, where the audit trail keeps it.
    const auditDb = h.connections.context.database.forSchema<{
      audit_records: { action: string; outcome: string; details: unknown };
    }>("audit");
    const audit = await waitFor(
      async () => {
        await (h.platform.services.audit as unknown as { drain(): Promise<void> }).drain();
        const rows = await auditDb.selectFrom("audit_records").select(["action", "outcome", "details"]).execute();
        return rows.some((r) => r.action === "cluster:delete") ? rows : undefined;
      },
      10_000,
      "the audit record",
    );
    expect(audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: "cluster:delete",
          outcome: "denied",
          details: expect.objectContaining({ namespace: "prod", resource: "pods", name: "db" }),
        }),
      ]),
    );
  });

  // Plain and %2e dot segments are resolved by URL parsing (RFC 3986 5.2.4) before any routing, so
  // the path policy checks is the path the cluster receives; what survives parsing is refused here.
  it("refuses encoded slashes, backslashes and dot segments hidden behind them with 400", async () => {
    for (const path of [
      `/v1/clusters/${clusterId}/proxy/api/v1/namespaces%2Fprod/pods`,
      `/v1/clusters/${clusterId}/proxy/api/v1/namespaces/..%5cx/pods`,
    ]) {
      expect(await rawGet(h.url, path, h.memberToken), path).toBe(400);
    }
  });

  it("refuses impersonation (kubectl --as) with 400: policies decide on what the relay does as itself", async () => {
    const before = kube.requests.length;
    const res = await fetch(`${h.url}/v1/clusters/${clusterId}/proxy/api/v1/namespaces/default/configmaps`, {
      headers: { authorization: `Bearer ${h.memberToken}`, "Impersonate-User": "system:admin" },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toContain("Impersonate-User");
    expect(kube.requests.slice(before)).toEqual([]);
  });

  it("rotating the tunnel token: the relay persists the new one and reconnects, the old one opens nothing", async () => {
    const before = relay.output().match(/tunnel open/g)?.length ?? 0;
    const clusterRow = () =>
      h.connections.context.db
        .selectFrom("clusters")
        .select("tunnel_connection_id")
        .where("id", "=", clusterId)
        .executeTakeFirstOrThrow();
    const connectionBefore = (await clusterRow()).tunnel_connection_id;
    // Requests keep flowing while the tunnel is replaced: the relay keeps the old one open until the
    // platform has registered the new one, so no request meets a moment without a tunnel (503).
    let rotating = true;
    const during: number[] = [];
    const traffic = (async () => {
      while (rotating) {
        const res = await h.call("GET", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`, { token: h.memberToken });
        during.push(res.status);
      }
    })();
    const rotated = await h.call<{ tunnelToken: string; deliveredToRelay: boolean }>(
      "POST",
      `/v1/clusters/${clusterId}/rotate-tunnel-token`,
      { token: h.adminToken },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.deliveredToRelay).toBe(true);
    expect(rotated.body.tunnelToken).not.toBe(tunnelToken);
    await waitFor(
      () => readFileSync(relay.tokenFile, "utf8").trim() === rotated.body.tunnelToken,
      5000,
      "the token file",
    );
    await waitFor(() => (relay.output().match(/tunnel open/g)?.length ?? 0) > before, 10_000, "the reconnect");
    // Past the platform's registration of the new tunnel and its closing of the old one.
    await waitFor(async () => (await clusterRow()).tunnel_connection_id !== connectionBefore, 10_000, "the new tunnel");
    await new Promise((resolve) => setTimeout(resolve, 300));
    rotating = false;
    await traffic;
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((s) => s !== 200)).toEqual([]);
    // The old token no longer opens a tunnel.
    expect(await tunnelUpgradeStatus(h.url, clusterId, tunnelToken)).toBe(401);
    // Requests still flow, over the new tunnel.
    const core = proxyKubeConfig(h.url, clusterId, h.memberToken).makeApiClient(CoreV1Api);
    expect((await core.listNamespace()).items.length).toBeGreaterThan(0);
    tunnelToken = rotated.body.tunnelToken;
  });

  it("reports disconnected (with since) once the relay stops, and the proxy answers 503", async () => {
    await relay.stop();
    const cluster = await waitForClusterStatus(h, clusterId, "disconnected", {
      timeoutMs: 15_000,
      what: "the disconnect",
    });
    expect(cluster.statusSince).toBeTruthy();
    const res = await h.call("GET", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`, { token: h.memberToken });
    expect(res.status).toBe(503);
  });
});
