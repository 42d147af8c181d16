// The all-in-one is one deployable: the gateway's request span, and a span per service it calls in
// process, in one trace, exported under service.name "agentplane".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

const OWNER = `owner-${"t".repeat(40)}`;

describe("tracing in the all-in-one", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tracing-aio-"));
  let database: Database;
  let platform: Platform | undefined;
  let collector: CollectorStandIn;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    database = await openDatabase(`pglite://${join(dataDir, "pg")}`);
    const env = AllInOneEnvSchema.parse({
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      AGENTPLANE_BOOTSTRAP_TOKEN: OWNER,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
    await database?.close();
    await collector?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("names the gateway span by its route and nests the services it calls in the same trace", async () => {
    const res = await fetch(`${platform?.url}/v1/orgs`, {
      method: "POST",
      headers: { authorization: `Bearer ${OWNER}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Traced in process" }),
    });
    expect(res.status).toBe(201);
    const traceId = /^00-([0-9a-f]{32})-/.exec(res.headers.get("traceresponse") ?? "")?.[1];
    expect(traceId).toBeDefined();
    // Closing flushes what is queued.
    await platform?.close();
    platform = undefined;
    const spans = collector.spans().filter((s) => s.traceId === traceId);
    const root = spans.find((s) => !s.parentSpanId);
    expect(root?.name).toBe("POST /v1/orgs");
    expect(root?.resource["service.name"]).toBe("agentplane");
    // tenancy's handling is a child span named by tenancy's own route, not a rename of the root.
    const children = spans.filter((s) => s.parentSpanId === root?.spanId).map((s) => s.name);
    expect(children).toContain("POST /v1/orgs");
    expect(spans.length).toBeGreaterThanOrEqual(2);
    expect(collector.everything()).not.toContain(OWNER);
  });
});
