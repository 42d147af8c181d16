import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionsPlatform,
  startConnectionsPlatform,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { tunnelUpgradeStatus, waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { type KubeStandIn, kubeconfigFor, proxyCoreApi, startKubeStandIn } from "./fixtures/kube-stand-in.ts";
import { type SecretRelay, startSecretRelay } from "./fixtures/relay-process.ts";

const pg = await requirePostgres();

const SECRET = { namespace: "agentplane", name: "relay-token" };
const secretToken = (kube: KubeStandIn): string | undefined => {
  const data = kube.get("secrets", SECRET.namespace, SECRET.name)?.data as Record<string, string> | undefined;
  return data?.token ? Buffer.from(data.token, "base64").toString("utf8") : undefined;
};

describe.skipIf(!pg.available)(`a relay installed from a Kubernetes Secret${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let relay: SecretRelay;
  let clusterId: string;
  let tunnelToken: string;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    kube = await startKubeStandIn();
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "from-secret" },
    });
    clusterId = created.body.id;
    tunnelToken = created.body.tunnelToken;
    kube.put("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: SECRET.name, namespace: SECRET.namespace, labels: { app: "agentplane-relay" } },
      type: "Opaque",
      data: { token: Buffer.from(tunnelToken).toString("base64"), other: Buffer.from("kept").toString("base64") },
    });
  });
  afterAll(async () => {
    await relay?.stop();
    await kube?.close();
    await h?.close();
  });

  it("reads its tunnel token from the Secret through the API server and connects", async () => {
    relay = startSecretRelay({
      url: h.url,
      clusterId,
      secret: `${SECRET.namespace}/${SECRET.name}`,
      kubeconfig: kubeconfigFor(kube),
    });
    await waitForClusterStatus(h, clusterId, "connected", { what: "the relay to connect", output: relay.output });
    expect(kube.requests).toEqual(
      expect.arrayContaining([
        { method: "GET", path: `/api/v1/namespaces/${SECRET.namespace}/secrets/${SECRET.name}`, authorized: true },
      ]),
    );
  });

  it("a rotated token is patched into the Secret, the relay reconnects with it and the old one opens nothing", async () => {
    const before = relay.opened();
    const rotated = await h.call<{ tunnelToken: string; deliveredToRelay: boolean }>(
      "POST",
      `/v1/clusters/${clusterId}/rotate-tunnel-token`,
      { token: h.adminToken },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.deliveredToRelay).toBe(true);
    await waitFor(() => secretToken(kube) === rotated.body.tunnelToken, 10_000, "the Secret to hold the new token");
    expect(kube.requests.filter((r) => r.method === "PATCH" && r.path.includes("/secrets/"))).toHaveLength(1);
    // A merge patch of the one key: the Secret's other keys and labels are untouched.
    const secret = kube.get("secrets", SECRET.namespace, SECRET.name)!;
    expect(Buffer.from((secret.data as Record<string, string>).other!, "base64").toString()).toBe("kept");
    expect(secret.metadata.labels).toEqual({ app: "agentplane-relay" });
    await waitFor(() => relay.opened() > before, 10_000, "the reconnect");
    expect(await tunnelUpgradeStatus(h.url, clusterId, tunnelToken)).toBe(401);
    const namespaces = await proxyCoreApi(h.url, clusterId, h.memberToken).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain("default");
  });

  it("restarted, the relay reads the rotated token from the Secret and connects with it", async () => {
    await relay.stop();
    await waitForClusterStatus(h, clusterId, "disconnected", { timeoutMs: 15_000, what: "the disconnect" });
    relay = startSecretRelay({
      url: h.url,
      clusterId,
      secret: `${SECRET.namespace}/${SECRET.name}`,
      kubeconfig: kubeconfigFor(kube),
    });
    await waitFor(() => relay.opened() > 0, 25_000, "the relay to connect with the stored token");
    const pods = await proxyCoreApi(h.url, clusterId, h.memberToken).listNamespacedPod({ namespace: "default" });
    expect(pods.items).toEqual([]);
  });
});
