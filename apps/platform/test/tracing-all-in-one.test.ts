// The all-in-one is one deployable: the gateway's request span, and a span per service it calls in
// process, in one trace, exported under service.name "agentplane"; inside them a span per database
// statement, governance decision and spend reservation, none with content.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { attributesOf, type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREDS, type FakeUpstream, startFakeUpstream } from "../../inference-proxy/test/upstream.ts";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

const OWNER = `owner-${"t".repeat(40)}`;
const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";

async function until(check: () => boolean, what: () => string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const traceOf = (res: Response) => /^00-([0-9a-f]{32})-/.exec(res.headers.get("traceresponse") ?? "")?.[1] as string;

describe("tracing in the all-in-one", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tracing-aio-"));
  let database: Database;
  let platform: Platform | undefined;
  let collector: CollectorStandIn;
  let up: FakeUpstream;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    up = await startFakeUpstream();
    database = await openDatabase(`pglite://${join(dataDir, "pg")}`);
    const env = AllInOneEnvSchema.parse({
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      AGENTPLANE_BOOTSTRAP_TOKEN: OWNER,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      CLOUD_A_BEARER_TOKEN: CREDS.bearer,
      CLOUD_A_ENDPOINT_URL: up.url,
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
    await database?.close();
    await collector?.close();
    await up?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown, token = OWNER) =>
    fetch(`${platform?.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const byTrace = (traceId: string) => collector.spans().filter((s) => s.traceId === traceId);

  it("names the gateway span by its route and nests the services it calls in the same trace", async () => {
    const res = await call("POST", "/v1/orgs", { name: "Traced in process" });
    expect(res.status).toBe(201);
    const traceId = traceOf(res);
    expect(traceId).toBeDefined();
    await until(
      () => byTrace(traceId).some((s) => s.attributes?.some((a) => a.key === "db.system.name")),
      () => `the spans of ${traceId}`,
    );
    const spans = byTrace(traceId);
    const root = spans.find((s) => !s.parentSpanId);
    expect(root?.name).toBe("POST /v1/orgs");
    expect(root?.resource["service.name"]).toBe("agentplane");
    // tenancy's handling is a child span named by tenancy's own route, not a rename of the root.
    const service = spans.find((s) => s.parentSpanId === root?.spanId && s.name === "POST /v1/orgs");
    expect(service).toBeDefined();
    // Its statements are spans of their own, named by operation and table, inside its span.
    const statements = spans.filter((s) => attributesOf(s.attributes)["db.system.name"] === "postgresql");
    const insert = statements.find((s) => attributesOf(s.attributes)["db.operation.name"] === "INSERT");
    expect(insert?.name).toMatch(/^INSERT [a-z_]+$/);
    expect(attributesOf(insert?.attributes)["db.collection.name"]).toBeTruthy();
    const ancestors = (id: string | undefined): string[] => {
      const span = spans.find((s) => s.spanId === id);
      return span ? [span.spanId, ...ancestors(span.parentSpanId)] : [];
    };
    expect(ancestors(insert?.parentSpanId)).toContain(service?.spanId);
    // The gateway's /health counts what reached the collector.
    const health = (await (await fetch(`${platform?.url}/health`)).json()) as {
      telemetry?: { otlp?: { exported: number; failedBatches: number } };
    };
    expect(health.telemetry?.otlp?.exported).toBeGreaterThan(0);
    expect(health.telemetry?.otlp?.failedBatches).toBe(0);
    // No statement text and no parameter: the organization's name is nowhere.
    expect(collector.everything()).not.toContain("Traced in process");
    expect(collector.everything()).not.toContain(OWNER);
  });

  it("a model call carries spans of the governance decision and the spend reservation", async () => {
    const org = (await (await call("POST", "/v1/orgs", { name: "Models" })).json()) as { id: string };
    const project = (await (await call("POST", `/v1/orgs/${org.id}/projects`, { name: "agents" })).json()) as {
      id: string;
    };
    const { token } = (await (
      await call("POST", `/v1/orgs/${org.id}/api-tokens`, { name: "agent", role: "admin", projectId: project.id })
    ).json()) as { token: string };
    const res = await call(
      "POST",
      `/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(HAIKU)}/invoke`,
      {
        anthropic_version: "bedrock-2023-05-31",
        max_tokens: 20,
        messages: [{ role: "user", content: "AIO-CANARY-PROMPT say hi" }],
      },
      token,
    );
    expect(res.status).toBe(200);
    await res.text();
    const traceId = traceOf(res);
    const named = (name: string) => byTrace(traceId).find((s) => s.name === name);
    await until(
      () => Boolean(named("governance.decision") && named("governance.evaluate") && named("spend.reserve")),
      () => `decision and reservation spans of ${traceId}: ${byTrace(traceId).map((s) => s.name)}`,
    );
    const decision = attributesOf(named("governance.decision")?.attributes);
    expect(decision["agentplane.governance.action"]).toBe("llm:invoke");
    expect(decision["agentplane.governance.decision"]).toBe("allow");
    expect(decision["agentplane.governance.cached"]).toBe(false);
    // Governance's own evaluation is inside the decision the proxy asked for.
    const evaluate = named("governance.evaluate");
    const parents = (id: string | undefined): string[] => {
      const span = byTrace(traceId).find((s) => s.spanId === id);
      return span ? [span.name, ...parents(span.parentSpanId)] : [];
    };
    expect(parents(evaluate?.parentSpanId)).toContain("governance.decision");
    const reserve = attributesOf(named("spend.reserve")?.attributes);
    expect(reserve["agentplane.spend.mode"]).toMatch(/^(reserved|deferred)$/);
    expect(reserve["agentplane.spend.estimated_micro_usd"]).toBeGreaterThan(0);
    const everything = collector.everything();
    for (const secret of ["AIO-CANARY-PROMPT", CREDS.bearer, token]) expect(everything).not.toContain(secret);
  });
});
