// One request, one trace, across processes: the gateway, the service it forwards to, the services
// that one asks, and the model upstream, each exporting to the same OTLP collector stand-in.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateInternalKeys } from "@agentplane/service-kit";
import { createTestDatabase, requirePostgres, requireRedis, type TestDatabase } from "@agentplane/testkit";
import { type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callApi as call, freePort, type Spawned, spawnNode, waitForHealth } from "../../../tests/e2e/processes.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "../../inference-proxy/test/upstream.ts";
import { requireBwrap } from "./sandbox-harness.ts";

const pg = await requirePostgres();
const redis = await requireRedis();
const bwrap = requireBwrap();
const LAUNCHER = "apps/platform/src/main.ts";
const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const COLLECTOR_KEY = "collector-key-for-tests";

async function until(check: () => boolean, what: () => string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!pg.available || !redis.available || !bwrap.available)(
  `distributed tracing: one trace from the gateway to the upstream${pg.reason}${redis.reason}${bwrap.reason}`,
  () => {
    let database: TestDatabase;
    let collector: CollectorStandIn;
    let up: FakeUpstream;
    const processes: Spawned[] = [];
    const dataDir = mkdtempSync(join(tmpdir(), "tracing-distributed-"));
    const owner = `boot_${randomBytes(24).toString("hex")}`;
    let gateway = "";
    let projectId = "";
    let token = "";

    beforeAll(async () => {
      database = await createTestDatabase("tracedist");
      collector = await startOtlpCollector({ apiKey: COLLECTOR_KEY });
      up = await startFakeUpstream();
      const keys = await generateInternalKeys();
      const [tenancy, audit, inference, sandbox, gw] = (await Promise.all(
        Array.from({ length: 5 }, () => freePort()),
      )) as [number, number, number, number, number];
      const url = (p: number) => `http://127.0.0.1:${p}`;
      gateway = url(gw);
      const shared = {
        DATABASE_URL: database.url,
        REDIS_URL: "redis://127.0.0.1:6379/10",
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
        TENANCY_URL: url(tenancy),
        AUDIT_URL: url(audit),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_API_KEY: COLLECTOR_KEY,
        DEPLOYMENT_ENVIRONMENT: "staging",
      };
      const start = (target: string, port: number, env: Record<string, string> = {}) => {
        const p = spawnNode(LAUNCHER, [`--target=${target}`], { ...shared, PORT: String(port), ...env });
        processes.push(p);
        return waitForHealth(url(port), 120_000).catch((err) => {
          throw new Error(`${(err as Error).message}\n${p.output().slice(-2000)}`);
        });
      };
      await start("tenancy", tenancy, { AGENTPLANE_BOOTSTRAP_TOKEN: owner });
      await Promise.all([
        start("audit", audit),
        start("inference", inference, { CLOUD_A_BEARER_TOKEN: CREDS.bearer, CLOUD_A_ENDPOINT_URL: up.url }),
        start("sandbox", sandbox, { SANDBOX_DATA_DIR: dataDir, AGENTPLANE_API_URL: gateway }),
      ]);
      await start("gateway", gw, { INFERENCE_URL: url(inference), SANDBOX_URL: url(sandbox) });
      const org = await call<{ id: string }>(gateway, owner, "POST", "/v1/orgs", { name: "Traced" });
      const project = await call<{ id: string }>(gateway, owner, "POST", `/v1/orgs/${org.body.id}/projects`, {
        name: "agents",
      });
      projectId = project.body.id;
      token = (
        await call<{ token: string }>(gateway, owner, "POST", `/v1/orgs/${org.body.id}/api-tokens`, {
          name: "agent",
          role: "admin",
          projectId,
        })
      ).body.token;
    }, 300_000);

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await collector?.close();
      await up?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const byTrace = (traceId: string) => collector.spans().filter((s) => s.traceId === traceId);
    const attr = (span: { attributes?: { key: string; value: Record<string, unknown> }[] }, key: string) => {
      const v = span.attributes?.find((a) => a.key === key)?.value;
      return v ? (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue)) : undefined;
    };

    it("a model call is one trace: gateway, inference proxy and the upstream call with gen_ai attributes", async () => {
      const response = await fetch(`${gateway}/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(HAIKU)}/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          anthropic_version: "bedrock-2023-05-31",
          max_tokens: 20,
          messages: [{ role: "user", content: "TRACE-CANARY-PROMPT say hi" }],
        }),
      });
      expect(response.status).toBe(200);
      await response.text();
      const traceId = /^00-([0-9a-f]{32})-/.exec(response.headers.get("traceresponse") ?? "")?.[1];
      expect(traceId).toBeDefined();
      // The upstream was called with the trace's traceparent.
      const seen = up.seen.at(-1);
      expect(String(seen?.headers.traceparent)).toContain(traceId);
      await until(
        () => {
          const services = new Set(byTrace(traceId as string).map((s) => s.resource["service.name"]));
          return (
            services.has("api-gateway") &&
            services.has("inference-proxy") &&
            byTrace(traceId as string).some((s) => s.name.startsWith("chat "))
          );
        },
        () =>
          `the gateway's, the proxy's and the model call's spans of ${traceId}; seen: ${JSON.stringify(collector.spans().map((x) => [x.traceId.slice(0, 6), x.resource["service.name"], x.name]))}`,
      );
      const spans = byTrace(traceId as string);
      const gatewaySpan = spans.find((s) => s.resource["service.name"] === "api-gateway" && !s.parentSpanId);
      expect(gatewaySpan?.name).toBe("POST /v1/llm/cloud-a/{region}/{path}");
      expect(attr(gatewaySpan!, "http.response.status_code")).toBe(200);
      expect(attr(gatewaySpan!, "agentplane.principal.type")).toBe("api_token");
      const proxySpan = spans.find(
        (s) => s.resource["service.name"] === "inference-proxy" && s.parentSpanId === gatewaySpan?.spanId,
      );
      expect(proxySpan).toBeDefined();
      const model = spans.find((s) => s.name.startsWith("chat "));
      expect(model?.parentSpanId).toBe(proxySpan?.spanId);
      expect(attr(model!, "gen_ai.system")).toBe("cloud-a");
      expect(attr(model!, "gen_ai.request.model")).toBe(HAIKU);
      expect(attr(model!, "gen_ai.usage.input_tokens")).toBeGreaterThan(0);
      expect(spans.every((s) => s.resource["deployment.environment.name"] === "staging")).toBe(true);
      // The proxy's first call of the project reserves its estimate: a span inside the proxy's own.
      const reserve = spans.find((s) => s.name === "spend.reserve");
      expect(reserve?.resource["service.name"]).toBe("inference-proxy");
      expect(attr(reserve!, "agentplane.spend.mode")).toBe("reserved");
    });

    it("a sandbox exec is one trace across the gateway, sandbox-svc and tenancy", async () => {
      const created = await call<{ id: string }>(gateway, token, "POST", `/v1/projects/${projectId}/sandboxes`, {
        name: "traced",
        start: true,
      });
      expect(created.status).toBe(201);
      const exec = await call<{ stdout: string }>(gateway, token, "POST", "/v1/shell/exec", {
        projectId,
        sandboxId: created.body.id,
        command: ["echo", "TRACE-CANARY-OUTPUT"],
      });
      expect(exec.body.stdout).toBe("TRACE-CANARY-OUTPUT\n");
      const traceId = /^00-([0-9a-f]{32})-/.exec(exec.headers.get("traceresponse") ?? "")?.[1] as string;
      await until(
        () => {
          const services = new Set(byTrace(traceId).map((s) => s.resource["service.name"]));
          return services.has("api-gateway") && services.has("sandbox-svc") && services.has("tenancy");
        },
        () =>
          `gateway, sandbox and tenancy spans of ${traceId}; seen: ${JSON.stringify(collector.spans().map((x) => [x.traceId.slice(0, 6), x.resource["service.name"], x.name]))}`,
      );
      const names = byTrace(traceId).map((s) => s.name);
      expect(names).toContain("POST /v1/shell/exec");
      // Database statements are spans of the service that ran them, named by operation and table.
      const statement = byTrace(traceId).find((s) => attr(s, "db.system.name") === "postgresql");
      expect(statement?.name).toMatch(/^(SELECT|INSERT|UPDATE|DELETE|WITH)( [a-z_]+)?$/);
      // Span names are route templates: no id of the request appears in them.
      expect(names.join(" ")).not.toContain(created.body.id);
      expect(names.join(" ")).not.toContain(projectId);
    });

    it("sends no credential, token, body, query value, prompt or command output", async () => {
      await call(gateway, token, "GET", `/v1/projects/${projectId}/sandboxes?limit=7&cursor=QUERY-CANARY-VALUE`);
      await new Promise((r) => setTimeout(r, 2500));
      const everything = collector.everything();
      for (const secret of [
        token,
        owner,
        CREDS.bearer,
        "TRACE-CANARY-PROMPT",
        "TRACE-CANARY-OUTPUT",
        "QUERY-CANARY-VALUE",
      ]) {
        expect(everything.includes(secret), `the collector received ${secret.slice(0, 12)}…`).toBe(false);
      }
      expect(collector.received.every((r) => r.headers["x-api-key"] === COLLECTOR_KEY)).toBe(true);
    });
  },
);
