// A request to a cluster through the relay is one trace: the platform's spans end in a `tunnel GET`
// span, whose traceparent the relay passes on to the Kubernetes API server.
import { requirePostgres } from "@agentplane/testkit";
import { attributesOf, type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindProjectPolicy } from "../../connections-svc/test/fixtures/governance-policy.ts";
import {
  type ConnectionsPlatform,
  type RelayProcess,
  startConnectionsPlatform,
  startRelayProcess,
  waitFor,
} from "../../platform/test/connections-harness.ts";
import { type KubeStandIn, kubeconfigFor, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`tracing through the cluster relay${pg.reason}`, () => {
  let h: ConnectionsPlatform;
  let kube: KubeStandIn;
  let relay: RelayProcess | undefined;
  let collector: CollectorStandIn;
  let clusterId: string;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    h = await startConnectionsPlatform({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } });
    await bindProjectPolicy(h, "cluster-access", "permit(principal, action, resource);");
    kube = await startKubeStandIn();
    const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
      token: h.adminToken,
      body: { name: "traced" },
    });
    clusterId = created.body.id;
    relay = startRelayProcess({
      url: h.url,
      clusterId,
      tunnelToken: created.body.tunnelToken,
      kubeconfig: kubeconfigFor(kube),
    });
    await waitFor(
      async () => (await h.call<{ status: string }>("GET", `/v1/clusters/${clusterId}`)).body.status === "connected",
      25_000,
      "the relay to connect",
    ).catch((err) => {
      throw new Error(`${(err as Error).message}; relay output:\n${relay?.output()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await relay?.stop();
    await kube?.close();
    await h?.close();
    await collector?.close();
  });

  it("the API server receives the traceparent of the tunnel span, a child of the request's trace", async () => {
    const res = await h.call("GET", `/v1/clusters/${clusterId}/proxy/api/v1/namespaces?limit=5`, {
      token: h.memberToken,
    });
    expect(res.status).toBe(200);
    const traceId = /^00-([0-9a-f]{32})-/.exec(res.headers.get("traceresponse") ?? "")?.[1] as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const seen = kube.requests.filter((r) => r.path.startsWith("/api/v1/namespaces")).at(-1);
    const [, seenTrace, seenParent] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-/.exec(seen?.traceparent ?? "") ?? [];
    expect(seenTrace).toBe(traceId);
    const tunnel = await waitFor(
      () => collector.spans().find((s) => s.traceId === traceId && s.name === "tunnel GET"),
      20_000,
      "the tunnel span",
    );
    // The API server's parent is the tunnel span, itself inside the platform's request.
    expect(seenParent).toBe(tunnel.spanId);
    expect(attributesOf(tunnel.attributes)).toMatchObject({
      "agentplane.cluster.id": clusterId,
      "http.response.status_code": 200,
    });
    const root = collector.spans().find((s) => s.traceId === traceId && !s.parentSpanId);
    expect(root?.name).toMatch(/^GET \/v1\/clusters\/\{/);
    expect(collector.everything()).not.toContain(h.memberToken);
  });
});
