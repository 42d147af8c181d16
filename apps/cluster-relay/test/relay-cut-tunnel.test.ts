import { requirePostgres } from "@agentplane/testkit";
import { CoreV1Api, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindProjectPolicy } from "../../connections-svc/test/fixtures/governance-policy.ts";
import {
  type ConnectionsPlatform,
  type RelayProcess,
  startConnectionsPlatform,
  startRelayProcess,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { type KubeStandIn, kubeconfigFor, proxyKubeConfig, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

/** What a relay must never print: Node's internal assertions and crashes of its own. */
const CRASHED = /ERR_INTERNAL_ASSERTION|Assertion failed|Uncaught|unhandled/i;

/**
 * The platform cutting the only tunnel a real relay holds, with requests and a watch in flight:
 * a rotation that is not delivered (the holder may hold a leaked token) and the cluster's deletion.
 * The relay process must survive, refused dials must back off, and every client must get an answer.
 */
describe.skipIf(!pg.available)(`the platform cuts a real relay's only tunnel${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  const relays: RelayProcess[] = [];

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    await bindProjectPolicy(h, "cluster-access", `permit(principal, action, resource);`);
    kube = await startKubeStandIn();
  }, 120_000);
  afterAll(async () => {
    for (const relay of relays) await relay.stop();
    await kube?.close();
    await h?.close();
  });

  /** A cluster with a connected relay, a watch open through it, and a list answered. */
  async function connected(name: string) {
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name },
    });
    expect(created.status).toBe(201);
    const clusterId = created.body.id;
    const relay = startRelayProcess({
      url: h.url,
      clusterId,
      tunnelToken: created.body.tunnelToken,
      kubeconfig: kubeconfigFor(kube),
    });
    relays.push(relay);
    await waitForClusterStatus(h, clusterId, "connected", { timeoutMs: 25_000, what: "the relay to connect" }).catch(
      (err) => {
        throw new Error(`${(err as Error).message}; relay output:\n${relay.output()}`);
      },
    );
    const kc = proxyKubeConfig(h.url, clusterId, h.memberToken);
    expect((await kc.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);
    const watchesBefore = kube.openWatches();
    let ended: string | undefined;
    const watch = await new Watch(kc).watch(
      "/api/v1/namespaces/default/configmaps",
      {},
      () => {},
      (err?: unknown) => {
        ended = err ? String((err as Error).message ?? err) : "ended";
      },
    );
    await waitFor(() => kube.openWatches() === watchesBefore + 1, 10_000, "the watch to reach the stand-in");
    return { clusterId, relay, watch, ended: () => ended };
  }

  /** Requests in flight while the tunnel is cut: each one answered, none left hanging. */
  function traffic(clusterId: string) {
    let running = true;
    const statuses: number[] = [];
    const done = (async () => {
      while (running) {
        const res = await h.call("GET", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces`, { token: h.memberToken });
        statuses.push(res.status);
        // Paced under the gateway's rate limit for one token.
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    return {
      statuses,
      stop: async () => {
        running = false;
        await done;
      },
    };
  }

  it("a rotation not delivered cuts the tunnel at once; the relay lives on, refused, and the new token connects", async () => {
    const { clusterId, relay, watch, ended } = await connected("cut-by-rotation");
    const load = traffic(clusterId);
    await waitFor(() => load.statuses.length >= 3, 10_000, "requests before the cut");
    const rotated = await h.call<{ tunnelToken: string; deliveredToRelay: boolean }>(
      "POST",
      `/v1/clusters/${clusterId}/rotate-tunnel-token?deliver=false`,
      { token: h.adminToken },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.deliveredToRelay).toBe(false);
    // The watch through the cut tunnel ends (its client hears of it) rather than hanging.
    await waitFor(() => ended() !== undefined, 10_000, "the watch to end");
    // The relay dials again with the token it holds and is refused, backing off; it does not exit.
    await waitFor(() => (relay.output().match(/tunnel refused/g)?.length ?? 0) >= 2, 20_000, "refused dials");
    await waitFor(() => load.statuses.includes(503), 10_000, "the proxy to answer 503");
    await load.stop();
    // Every request got an answer: served before the cut, 503 after (502 for one cut in flight).
    expect(load.statuses.filter((s) => ![200, 502, 503].includes(s))).toEqual([]);
    expect(relay.child.exitCode).toBeNull();
    expect(relay.output()).not.toMatch(CRASHED);
    expect(relay.output()).toContain('"status":401');
    await waitFor(() => kube.openWatches() === 0, 5_000, "the upstream watch to close with the tunnel").catch((err) => {
      throw new Error(`${(err as Error).message} (${kube.openWatches()} open); relay output:\n${relay.output()}`);
    });
    watch.abort();
    await relay.stop();

    // The operator hands the new token to a relay, which connects with it.
    const replaced = startRelayProcess({
      url: h.url,
      clusterId,
      tunnelToken: rotated.body.tunnelToken,
      kubeconfig: kubeconfigFor(kube),
    });
    relays.push(replaced);
    await waitForClusterStatus(h, clusterId, "connected", { timeoutMs: 25_000, what: "the new relay" });
    const core = proxyKubeConfig(h.url, clusterId, h.memberToken).makeApiClient(CoreV1Api);
    expect((await core.listNamespace()).items.length).toBeGreaterThan(0);
    expect(replaced.output()).not.toMatch(CRASHED);
  }, 120_000);

  it("deleting the cluster cuts its tunnel; the relay lives on, refused, with requests and a watch in flight", async () => {
    const { clusterId, relay, watch, ended } = await connected("cut-by-deletion");
    const load = traffic(clusterId);
    await waitFor(() => load.statuses.length >= 3, 10_000, "requests before the cut");
    const deleted = await h.call("DELETE", `/v1/clusters/${clusterId}`, { token: h.adminToken });
    expect(deleted.status).toBe(204);
    await waitFor(() => ended() !== undefined, 10_000, "the watch to end");
    await waitFor(() => (relay.output().match(/tunnel refused/g)?.length ?? 0) >= 2, 20_000, "refused dials");
    await waitFor(() => load.statuses.includes(404), 10_000, "the deleted cluster to answer 404");
    await load.stop();
    expect(load.statuses.filter((s) => ![200, 404, 502, 503].includes(s))).toEqual([]);
    expect(relay.child.exitCode).toBeNull();
    expect(relay.output()).not.toMatch(CRASHED);
    // The relay ended the Kubernetes side of the watch with the tunnel, not when it next wrote.
    await waitFor(() => kube.openWatches() === 0, 5_000, "the upstream watches to close").catch((err) => {
      throw new Error(`${(err as Error).message} (${kube.openWatches()} open); relay output:\n${relay.output()}`);
    });
    watch.abort();
  }, 120_000);
});
