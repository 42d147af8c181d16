// Cluster proxy: the added latency of GET through gateway → connections → tunnel (HTTP/2 over a
// WebSocket) → a relay process → a Kubernetes API stand-in, against calling the stand-in directly
// in the same run; then 100 concurrent watches through one tunnel. The platform's governance
// service decides every call against a bound Cedar policy (a permit and a forbid that does not match).
import { kubeconfigFor, startKubeStandIn } from "../apps/cluster-relay/test/fixtures/kube-stand-in.ts";
import { resignRequest } from "../apps/connections-svc/src/aws/resign.ts";
import { startAwsStandIn, UPSTREAM_KEY } from "../apps/connections-svc/test/fixtures/aws-stand-ins.ts";
import { bindProjectPolicy, createProjectCredential } from "../apps/connections-svc/test/fixtures/governance-policy.ts";
import { startConnectionsPlatform, startRelayProcess, waitFor } from "../apps/platform/test/connections-harness.ts";
import { fmt } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 400);
const WATCHES = Number(process.env.BENCH_WATCHES ?? 100);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * CPU milliseconds the benchmark's process (gateway, connections, tenancy and governance run in
 * it) spent per request, by kind: steadier than wall time on a loaded machine.
 */
const cpuMs: Record<string, { ms: number; n: number }> = {};
function cpuPerRequest(kind: string): string {
  const c = cpuMs[kind];
  return c ? fmt(c.ms / c.n) : "-";
}
async function withCpu<T>(kind: string, n: number, work: () => Promise<T>): Promise<T> {
  const start = process.cpuUsage();
  const out = await work();
  const used = process.cpuUsage(start);
  const c = cpuMs[kind] ?? { ms: 0, n: 0 };
  cpuMs[kind] = c;
  c.ms += (used.user + used.system) / 1000;
  c.n += n;
  return out;
}

/** Waits for `check`, looking every millisecond (the harness's `waitFor` looks every 100 ms). */
async function soon(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function timeGets(url: string, token: string, rounds: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

const h = await startConnectionsPlatform();
await bindProjectPolicy(
  h,
  "bench",
  `@id("allow") permit(principal, action, resource);
@id("no-pod-deletes-in-prod") forbid(principal, action == Action::"cluster:delete", resource)
when { context has namespace && context.namespace == "prod" };
@id("no-writes-to-locked") forbid(principal, action == Action::"aws:call", resource)
when { context has bucket && context.bucket == "locked" };`,
);
const kube = await startKubeStandIn();
for (let i = 0; i < 20; i++) {
  kube.put("configmaps", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `cm-${i}`, namespace: "default" },
    data: { i: String(i) },
  });
}
const created = await h.call<{ id: string; tunnelToken: string }>("POST", `/v1/projects/${h.projectId}/clusters`, {
  token: h.adminToken,
  body: { name: "bench" },
});
const clusterId = created.body.id;
const relay = startRelayProcess({
  url: h.url,
  clusterId,
  tunnelToken: created.body.tunnelToken,
  kubeconfig: kubeconfigFor(kube),
  heartbeatMs: 10_000,
});
try {
  await waitFor(
    async () =>
      (await h.call<{ status: string }>("GET", `/v1/clusters/${clusterId}`, { token: h.adminToken })).body.status ===
      "connected",
    60_000,
    "the relay",
  );
  const path = "/api/v1/namespaces/default/configmaps";
  const proxyUrl = `${h.url}/v1/clusters/${clusterId}/proxy${path}`;
  const directUrl = `${kube.url}${path}`;
  const gatewayUrl = `${h.url}/v1/clusters/${clusterId}`;
  // Warm-up, then alternate rounds so load drift hits both sides alike.
  await timeGets(proxyUrl, h.memberToken, 50);
  await timeGets(directUrl, kube.token, 50);
  const direct: number[] = [];
  const proxied: number[] = [];
  const gateway: number[] = [];
  for (let r = 0; r < 4; r++) {
    direct.push(...(await withCpu("direct", ROUNDS / 4, () => timeGets(directUrl, kube.token, ROUNDS / 4))));
    proxied.push(...(await withCpu("proxy", ROUNDS / 4, () => timeGets(proxyUrl, h.memberToken, ROUNDS / 4))));
    gateway.push(...(await withCpu("gateway", ROUNDS / 4, () => timeGets(gatewayUrl, h.memberToken, ROUNDS / 4))));
  }
  for (const a of [direct, proxied, gateway]) a.sort((x, y) => x - y);
  console.log(`cluster proxy GET ${path} (${ROUNDS} requests each, one at a time)`);
  console.log(`  direct to the stand-in        p50 ${fmt(pct(direct, 50))} ms  p99 ${fmt(pct(direct, 99))} ms`);
  console.log(`  gateway → getCluster (no tunnel) p50 ${fmt(pct(gateway, 50))} ms  p99 ${fmt(pct(gateway, 99))} ms`);
  console.log(`  through the proxy and relay   p50 ${fmt(pct(proxied, 50))} ms  p99 ${fmt(pct(proxied, 99))} ms`);
  console.log(
    `  added by the proxy            p50 ${fmt(pct(proxied, 50) - pct(direct, 50))} ms  p99 ${fmt(pct(proxied, 99) - pct(direct, 99))} ms  (ratio p50 ${fmt(pct(proxied, 50) / pct(direct, 50))}x)`,
  );
  console.log(`  added beyond a gateway round trip p50 ${fmt(pct(proxied, 50) - pct(gateway, 50))} ms`);
  console.log(
    `  platform CPU per request: proxy ${cpuPerRequest("proxy")} ms, getCluster ${cpuPerRequest("gateway")} ms, direct (client side only) ${cpuPerRequest("direct")} ms`,
  );

  // 100 watches through the one tunnel, then one change fanned out to all of them.
  const controllers: AbortController[] = [];
  const seen = new Set<number>();
  const t0 = performance.now();
  for (let i = 0; i < WATCHES; i++) {
    const controller = new AbortController();
    controllers.push(controller);
    void fetch(`${proxyUrl}?watch=true&resourceVersion=999999`, {
      headers: { authorization: `Bearer ${h.memberToken}` },
      signal: controller.signal,
    })
      .then(async (res) => {
        const reader = res.body!.getReader();
        let text = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
          if (text.includes("bench-fanout")) seen.add(i);
        }
      })
      .catch(() => {});
  }
  await soon(() => kube.openWatches() >= WATCHES, 60_000, "the watches");
  const opened = performance.now() - t0;
  const t1 = performance.now();
  kube.put("configmaps", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "bench-fanout", namespace: "default" },
  });
  await soon(() => seen.size >= WATCHES, 30_000, "the fan-out");
  const fanout = performance.now() - t1;
  console.log(`${WATCHES} concurrent watches through one tunnel`);
  console.log(`  all open after ${fmt(opened)} ms; one event reached all ${WATCHES} in ${fmt(fanout)} ms`);
  for (const c of controllers) c.abort();
  await waitFor(() => kube.openWatches() === 0, 30_000, "the watches to close");
  console.log(`  all ${WATCHES} upstream watches closed after the clients aborted`);

  // AWS proxy: S3 GetObject through the proxy (bearer form, re-signed) vs a directly signed call.
  const aws = await startAwsStandIn();
  const credentialId = await createProjectCredential(h, { name: "bench", kind: "aws-keys", ...UPSTREAM_KEY });
  const conn = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/aws-connections`, {
    token: h.adminToken,
    body: { name: "bench", credentialId, defaultRegion: "eu-west-1", endpoints: { s3: aws.url } },
  });
  const object = new URL("/bench/object.txt", aws.url);
  const put = await resignRequest({
    method: "PUT",
    target: object,
    headers: new Headers(),
    body: new TextEncoder().encode("hello"),
    service: "s3",
    region: "eu-west-1",
    credentials: UPSTREAM_KEY,
  });
  await fetch(object, { method: "PUT", headers: put, body: "hello" });
  const directAws = async (): Promise<number> => {
    const t = performance.now();
    const headers = await resignRequest({
      method: "GET",
      target: object,
      headers: new Headers(),
      body: undefined,
      service: "s3",
      region: "eu-west-1",
      credentials: UPSTREAM_KEY,
    });
    const res = await fetch(object, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`direct GET: ${res.status}`);
    return performance.now() - t;
  };
  const proxiedAws = async (): Promise<number> => {
    const t = performance.now();
    const res = await fetch(`${h.url}/v1/aws-connections/${conn.body.id}/aws/bench/object.txt`, {
      headers: { authorization: `Bearer ${h.memberToken}`, "x-agentplane-aws-service": "s3" },
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`proxied GET: ${res.status}`);
    return performance.now() - t;
  };
  for (let i = 0; i < 30; i++) {
    await directAws();
    await proxiedAws();
  }
  const dAws: number[] = [];
  const pAws: number[] = [];
  for (let i = 0; i < ROUNDS / 2; i++) {
    dAws.push(await withCpu("aws-direct", 1, directAws));
    pAws.push(await withCpu("aws-proxy", 1, proxiedAws));
  }
  dAws.sort((a, b) => a - b);
  pAws.sort((a, b) => a - b);
  console.log(`AWS proxy S3 GetObject (${ROUNDS / 2} requests each, alternating)`);
  console.log(`  signed directly to the stand-in p50 ${fmt(pct(dAws, 50))} ms  p99 ${fmt(pct(dAws, 99))} ms`);
  console.log(`  through the proxy (re-signed)   p50 ${fmt(pct(pAws, 50))} ms  p99 ${fmt(pct(pAws, 99))} ms`);
  console.log(
    `  added by the proxy              p50 ${fmt(pct(pAws, 50) - pct(dAws, 50))} ms  (ratio p50 ${fmt(pct(pAws, 50) / pct(dAws, 50))}x)`,
  );
  console.log(`  a gateway round trip alone (getCluster above) p50 ${fmt(pct(gateway, 50))} ms`);
  console.log(
    `  platform CPU per request: proxy ${cpuPerRequest("aws-proxy")} ms, direct (signing client) ${cpuPerRequest("aws-direct")} ms`,
  );
  await aws.close();
} finally {
  await relay.stop();
  await kube.close();
  await h.close();
}
process.exit(0);
