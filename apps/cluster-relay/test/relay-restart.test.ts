import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type RestartablePlatform,
  startRestartablePlatform,
} from "../../connections-svc/test/fixtures/restartable-platform.ts";
import { type RelayProcess, startRelayProcess, waitFor } from "../../platform/test/connections-harness.ts";
import { type KubeStandIn, kubeconfigFor, proxyCoreApi, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`the relay across a control plane restart${pg.reason}`, () => {
  let p: RestartablePlatform;
  let kube: KubeStandIn;
  let relay: RelayProcess;
  let clusterId: string;

  beforeAll(async () => {
    p = await startRestartablePlatform();
    kube = await startKubeStandIn();
    const res = await fetch(`${p.url}/v1/projects/${p.projectId}/clusters`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "restarts" }),
    });
    const created = (await res.json()) as { id: string; tunnelToken: string };
    clusterId = created.id;
    relay = startRelayProcess({
      url: p.url,
      clusterId,
      tunnelToken: created.tunnelToken,
      kubeconfig: kubeconfigFor(kube),
    });
  }, 120_000);
  afterAll(async () => {
    await relay?.stop();
    await kube?.close();
    await p?.close();
  });

  const listNamespaces = async () => (await proxyCoreApi(p.url, clusterId, p.memberToken).listNamespace()).items.length;

  it("reconnects with jittered backoff once the control plane is back, and the proxy works again", async () => {
    await waitFor(async () => (await listNamespaces()) > 0, 25_000, "the first tunnel").catch((err) => {
      throw new Error(`${(err as Error).message}; relay output:\n${relay.output()}`);
    });
    const opened = () => relay.output().match(/tunnel open/g)?.length ?? 0;
    expect(opened()).toBe(1);
    await p.stop();
    // Down: the relay keeps dialing, refused, backing off.
    await waitFor(() => (relay.output().match(/tunnel error/g)?.length ?? 0) >= 2, 15_000, "failed reconnects");
    expect(relay.child.exitCode).toBeNull();
    await p.start();
    await waitFor(() => opened() === 2, 90_000, "the reconnect").catch((err) => {
      throw new Error(`${(err as Error).message}; relay output:\n${relay.output()}`);
    });
    await waitFor(async () => (await listNamespaces()) > 0, 15_000, "the proxy through the new tunnel");
    const cluster = await fetch(`${p.url}/v1/clusters/${clusterId}`, {
      headers: { authorization: `Bearer ${p.memberToken}` },
    }).then((r) => r.json() as Promise<{ status: string; replica: string }>);
    expect(cluster.status).toBe("connected");
    expect(cluster.replica).toBe(
      (p.running()!.services.connections as unknown as { context: { config: { replicaId: string } } }).context.config
        .replicaId,
    );
  }, 300_000);
});
