// Bench helper: the all-in-one platform with the inference proxy pointed at the upstream in
// UPSTREAM_URL, plus a bare Hono pass-through and a framework-free node:http one to the same upstream, served by
// this same process.
// Prints one JSON line: gateway URL, the bare URL and a project token. GET <bare>/__mem reports
// this process's memory after a GC (run with --expose-gc).
import { openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { serveFetch, silentLogger } from "@agentplane/service-kit";
import { createTestDatabase } from "@agentplane/testkit";
import { createBarePassThrough, createNodePassThrough } from "../../apps/inference-proxy/src/bench/bare-passthrough.ts";
import { assemblePlatform } from "../../apps/platform/src/assemble.ts";
import { benchPlatformEnv } from "./platform-env.ts";

const upstream = process.env.UPSTREAM_URL as string;
const { owner, dataDir, env } = benchPlatformEnv("inference", {
  // bench/telemetry.ts starts one platform exporting spans and one that does not.
  OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
});
const testDb = await createTestDatabase("bench_inference");
const database = await openDatabase(testDb.url);
const platform = await assemblePlatform({
  env,
  dataDir,
  database,
  bus: new MemoryBus(),
  logger: silentLogger(),
  inference: {
    providers: { cloudARegion: "us-east-1", cloudBKey: "bench-key", cloudBBaseUrl: `${upstream}/anthropic/v1` },
  },
});
const call = async (path: string, body: unknown) => {
  const res = await fetch(`${platform.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, string>;
};
const org = await call("/v1/orgs", { name: "bench" });
const project = await call(`/v1/orgs/${org.id}/projects`, { name: "bench" });
const token = await call(`/v1/orgs/${org.id}/api-tokens`, { name: "bench", role: "member", projectId: project.id });
const bare = createBarePassThrough(upstream);
const memory = () => {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return Response.json({ rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers });
};
const bareServer = await serveFetch(
  (req) => (new URL(req.url).pathname === "/__mem" ? memory() : bare.app.fetch(req)),
  { port: 0, hostname: "127.0.0.1" },
);
const nodeServer = createNodePassThrough(upstream);
await new Promise<void>((resolve) => nodeServer.listen(0, "127.0.0.1", resolve));
const nodeUrl = `http://127.0.0.1:${(nodeServer.address() as { port: number }).port}`;
process.stdout.write(
  `${JSON.stringify({ gateway: platform.url, bare: bareServer.url, node: nodeUrl, token: token.token })}\n`,
);
process.once("SIGTERM", () => {
  void (async () => {
    await platform.close();
    await database.close();
    await testDb.drop();
    process.exit(0);
  })();
});
