import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionsPlatform,
  type RelayProcess,
  startConnectionsPlatform,
  startRelayProcess,
} from "../../platform/test/connections-harness.ts";
import { waitForClusterStatus } from "./fixtures/cluster-status.ts";
import { type KubeStandIn, kubeconfigFor, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

/**
 * Paths through the cluster proxy that name the relay's own control requests, with a real relay:
 * the relay would refuse them with a 401 of its own (signed for another use), which tells a
 * client with a good token that its token is bad.
 */
describe.skipIf(!pg.available)(`the relay's own paths through the cluster proxy${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let relay: RelayProcess;
  let clusterId: string;

  beforeAll(async () => {
    h = await startConnectionsPlatform();
    kube = await startKubeStandIn();
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "paths" },
    });
    clusterId = created.body.id;
    relay = startRelayProcess({
      url: h.url,
      clusterId,
      tunnelToken: created.body.tunnelToken,
      kubeconfig: kubeconfigFor(kube),
    });
    await waitForClusterStatus(h, clusterId, "connected", { output: relay.output });
  });
  afterAll(async () => {
    await relay?.stop();
    await kube?.close();
    await h?.close();
  });

  for (const [method, path] of [
    ["GET", "/agentplane/v1/status"],
    ["PUT", "/agentplane/v1/tunnel-token"],
    ["GET", "/%61gentplane/v1/status"],
  ] as const) {
    it(`${method} ${path} is a 404 problem, never asked of the relay`, async () => {
      const res = await h.call(method, `/v1/clusters/${clusterId}/proxy${path}`, {
        token: h.memberToken,
        ...(method === "PUT" ? { body: { token: "x" } } : {}),
      });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(String(res.body.detail)).toContain("the /agentplane prefix is the relay's own");
    });
  }
});
