import { type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterEach, describe, expect, it } from "vitest";
import { createTelemetry, TelemetryEnvSchema, telemetrySettings } from "../src/index.ts";

const warnings: { obj: object; msg: string }[] = [];
const logger = { warn: (obj: object, msg: string) => warnings.push({ obj, msg }) };
const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
};

let collector: CollectorStandIn | undefined;
afterEach(async () => {
  await collector?.close();
  collector = undefined;
  warnings.length = 0;
});

describe("OpenTelemetry export", () => {
  it("is off without an endpoint: no exporter, and no socket even with the SDK's own variables set", async () => {
    collector = await startOtlpCollector();
    // The SDK's environment auto-configuration must not export on its own.
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${collector.url}/v1/traces`;
    try {
      const env = TelemetryEnvSchema.parse({});
      const telemetry = createTelemetry(telemetrySettings(env, "api-gateway", "1.0.0"), logger);
      expect(telemetry.enabled).toBe(false);
      const span = telemetry.tracer.startSpan("GET /v1/auth/me");
      span.setAttribute("http.response.status_code", 200);
      span.end();
      telemetry.emit("agent.started", { "agent.id": "a" });
      await telemetry.shutdown();
      await new Promise((r) => setTimeout(r, 1500));
      expect(collector.connections).toBe(0);
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    }
  });

  it("refuses an endpoint that is not a URL and an unknown environment, naming the variable", () => {
    const bad = TelemetryEnvSchema.safeParse({
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      DEPLOYMENT_ENVIRONMENT: "prod",
    });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path[0]).sort()).toEqual([
      "DEPLOYMENT_ENVIRONMENT",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]);
    expect(TelemetryEnvSchema.parse({}).DEPLOYMENT_ENVIRONMENT).toBe("production");
  });

  it("exports spans and log records with the resource attributes and the x-api-key header", async () => {
    collector = await startOtlpCollector({ apiKey: "collector-key" });
    const env = TelemetryEnvSchema.parse({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_API_KEY: "collector-key",
      DEPLOYMENT_ENVIRONMENT: "staging",
    });
    const telemetry = createTelemetry(telemetrySettings(env, "api-gateway", "1.2.3"), logger);
    const span = telemetry.tracer.startSpan("GET /v1/orgs/{orgId}");
    span.end();
    telemetry.emit("turn.completed", { "turn.steps": 2, "turn.delivered": true });
    await telemetry.shutdown();
    const [exported] = collector.spans();
    expect(exported?.name).toBe("GET /v1/orgs/{orgId}");
    expect(exported?.resource).toMatchObject({
      "service.name": "api-gateway",
      "service.version": "1.2.3",
      "deployment.environment.name": "staging",
    });
    const [record] = collector.logRecords();
    expect(record?.eventName).toBe("turn.completed");
    expect(collector.received.every((r) => r.headers["x-api-key"] === "collector-key")).toBe(true);
    expect(telemetry.stats()).toMatchObject({ exported: 2, failedBatches: 0 });
  });

  it("counts a collector that refuses (401) and logs it once, never throwing into the caller", async () => {
    collector = await startOtlpCollector({ apiKey: "right" });
    const env = TelemetryEnvSchema.parse({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_API_KEY: "wrong",
    });
    const telemetry = createTelemetry(telemetrySettings(env, "audit-svc", "1"), logger);
    for (let i = 0; i < 3; i++) telemetry.tracer.startSpan(`s${i}`).end();
    await until(() => telemetry.stats().failedBatches > 0);
    telemetry.tracer.startSpan("again").end();
    await telemetry.shutdown();
    expect(telemetry.stats().exported).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).not.toContain("wrong");
  });

  it("a collector that hangs costs the caller nothing, and shutdown is bounded", async () => {
    collector = await startOtlpCollector();
    collector.behave({ hang: true });
    const env = TelemetryEnvSchema.parse({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const telemetry = createTelemetry(telemetrySettings(env, "inference-proxy", "1"), logger);
    const started = performance.now();
    for (let i = 0; i < 5000; i++) telemetry.tracer.startSpan(`s${i}`).end();
    expect(performance.now() - started).toBeLessThan(1000);
    await until(() => collector!.received.length > 0);
    const closing = performance.now();
    await telemetry.shutdown(500);
    expect(performance.now() - closing).toBeLessThan(2000);
    expect(telemetry.stats().dropped).toBeGreaterThan(0);
  });
});
