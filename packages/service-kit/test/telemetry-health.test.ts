// A collector that refuses or fails is counted at `GET /health` (`telemetry.otlp`) and logged at
// most once a minute; the service answers as before. Against the OTLP collector stand-in.
import { type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceApp, generateInternalKeys, type RunningService, runService } from "../src/index.ts";

type Health = {
  status: string;
  telemetry?: { otlp?: { exported: number; failedBatches: number; lastError?: string } };
};

let collector: CollectorStandIn | undefined;
let running: RunningService<unknown> | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  await collector?.close();
  collector = undefined;
});

async function start(env: Record<string, string>) {
  const keys = await generateInternalKeys();
  running = (await runService({
    name: "probe",
    processHandlers: false,
    env: {
      PORT: 0,
      HOST: "127.0.0.1",
      INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
      LOG_LEVEL: "silent",
      ...env,
    },
    build: () => {
      const app = createServiceApp({ name: "probe", keys });
      app.get("/v1/ping", (c) => c.text("pong"));
      return { fetch: (request: Request) => app.fetch(request), close: () => {} };
    },
  })) as RunningService<unknown>;
  return running.server.url.replace("0.0.0.0", "127.0.0.1");
}

async function healthWhen(url: string, done: (h: Health) => boolean): Promise<Health> {
  const end = Date.now() + 20_000;
  for (;;) {
    const health = (await (await fetch(`${url}/health`)).json()) as Health;
    if (done(health) || Date.now() > end) return health;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("export failures at /health", () => {
  for (const [what, behave, expected] of [
    ["answers 500", { status: 500 }, "refused (500)"],
    ["refuses the key (401)", {}, "refused (401)"],
  ] as const) {
    it(`a collector that ${what} is counted there, and requests are served as before`, async () => {
      collector = await startOtlpCollector({ apiKey: "the-right-key" });
      collector.behave(behave);
      const url = await start({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_API_KEY: expected === "refused (401)" ? "a-wrong-key" : "the-right-key",
      });
      for (let i = 0; i < 3; i++) expect(await (await fetch(`${url}/v1/ping?i=${i}`)).text()).toBe("pong");
      const health = await healthWhen(url, (h) => (h.telemetry?.otlp?.failedBatches ?? 0) > 0);
      expect(health.status).toBe("ok");
      expect(health.telemetry?.otlp).toMatchObject({ exported: 0, lastError: expected });
      expect(health.telemetry?.otlp?.failedBatches).toBeGreaterThan(0);
      expect(JSON.stringify(health)).not.toContain(collector.url);
      expect(JSON.stringify(health)).not.toContain("key");
    });
  }

  it("a collector that is down is counted as unreachable", async () => {
    collector = await startOtlpCollector();
    const endpoint = collector.url;
    await collector.close();
    collector = undefined;
    const url = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    expect(await (await fetch(`${url}/v1/ping`)).text()).toBe("pong");
    const health = await healthWhen(url, (h) => (h.telemetry?.otlp?.failedBatches ?? 0) > 0);
    expect(health.telemetry?.otlp).toMatchObject({ exported: 0, lastError: "unreachable" });
  });

  it("a collector that accepts is counted as delivered; without an endpoint nothing is said", async () => {
    collector = await startOtlpCollector();
    const url = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    await fetch(`${url}/v1/ping`);
    const health = await healthWhen(url, (h) => (h.telemetry?.otlp?.exported ?? 0) > 0);
    expect(health.telemetry?.otlp).toMatchObject({ failedBatches: 0 });
    expect(health.telemetry?.otlp?.exported).toBeGreaterThan(0);
    await running?.close();
    running = undefined;
    const plain = await start({});
    const body = (await (await fetch(`${plain}/health`)).json()) as Health;
    expect(body.telemetry).toBeUndefined();
  });
});
