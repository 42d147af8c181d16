import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { type SlackStandIn, startSlackStandIn } from "@agentplane/testkit/slack";
import { attributesOf, type CollectorStandIn, startLangfuse, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, type Reply, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";
import { startSlackRuntime } from "./support/slack.ts";

const KEYS = { publicKey: "pk-lf-test", secretKey: "sk-lf-test" };
let fake: FakeModel;
let rt: TestRuntime | undefined;
const stands: CollectorStandIn[] = [];

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  for (const s of stands.splice(0)) await s.close();
});

/** A tool step (update_settings), then the final answer. */
const withTool = (body: Record<string, unknown>): Reply => {
  const messages = body.messages as Array<{ content: Array<{ type: string }> | string }>;
  const last = messages.at(-1)?.content;
  if (Array.isArray(last) && last.some((b) => b.type === "tool_result")) {
    return { content: [{ type: "text", text: "All set." }] };
  }
  return {
    content: [
      { type: "text", text: "Checking." },
      { type: "tool_use", id: `toolu_${messages.length}`, name: "update_settings", input: {} },
    ],
  };
};

async function mainThread(t: TestRuntime): Promise<string> {
  const threads = await t.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  return threads.body.items.find((x) => x.main)?.id as string;
}

async function chat(t: TestRuntime, text: string): Promise<void> {
  const res = await t.request("POST", `/agents/threads/${await mainThread(t)}/messages`, { text });
  expect(res.status).toBe(200);
  await readSse(res);
}

const attr = (span: { attributes?: { key: string; value: Record<string, unknown> }[] }, key: string) => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v ? (v.stringValue ?? v.intValue ?? v.boolValue) : undefined;
};

describe("LLM tracing (Langfuse)", () => {
  it("traces a chat turn as one trace: the run, a generation per model call, a tool child", async () => {
    const langfuse = await startLangfuse(KEYS);
    stands.push(langfuse);
    fake.respond = withTool;
    rt = await startTestRuntime(fake, {
      env: { TRACING_SECRET_KEY: KEYS.secretKey, TRACING_PUBLIC_KEY: KEYS.publicKey, TRACING_BASE_URL: langfuse.url },
    });
    await chat(rt, "Please check your settings.");
    await rt.close();
    rt = undefined;

    const spans = langfuse.spans();
    const root = spans.find((s) => s.name === "chat");
    expect(root, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(attr(root!, "langfuse.observation.type")).toBe("agent");
    expect(attr(root!, "langfuse.trace.name")).toBe("chat");
    const inTrace = spans.filter((s) => s.traceId === root!.traceId);
    const generations = inTrace.filter((s) => attr(s, "langfuse.observation.type") === "generation");
    expect(generations).toHaveLength(2);
    for (const g of generations) {
      expect(g.parentSpanId).toBe(root!.spanId);
      expect(attr(g, "langfuse.observation.model.name")).toBeTruthy();
      expect(String(attr(g, "langfuse.observation.usage_details"))).toContain('"input"');
      expect(String(attr(g, "langfuse.observation.input"))).toContain("Please check your settings.");
    }
    const tool = inTrace.find((s) => attr(s, "langfuse.observation.type") === "tool");
    expect(tool?.name).toBe("update_settings");
    expect(tool?.parentSpanId).toBe(root!.spanId);
    // Traced, the owner's turn keeps the tools it is offered: the settings tool ran.
    expect(attr(tool!, "langfuse.observation.metadata.success")).toBe("true");
    expect(String(attr(tool!, "langfuse.observation.output"))).not.toMatch(/not available/);
    expect(langfuse.received.every((r) => r.path === "/api/public/otel/v1/traces")).toBe(true);
    const basic = `Basic ${Buffer.from(`${KEYS.publicKey}:${KEYS.secretKey}`).toString("base64")}`;
    expect(langfuse.received.every((r) => r.headers.authorization === basic)).toBe(true);
  });

  it("traces a heartbeat with its own model and the gate's classification call inside it", async () => {
    const langfuse = await startLangfuse(KEYS);
    stands.push(langfuse);
    fake.respond = () => ({ content: [{ type: "text", text: "Disk is 95% full." }] });
    rt = await startTestRuntime(fake, {
      env: {
        TRACING_SECRET_KEY: KEYS.secretKey,
        TRACING_PUBLIC_KEY: KEYS.publicKey,
        TRACING_BASE_URL: langfuse.url,
        CLOUD_B_CLASSIFICATION_MODEL_ID: "gate-model",
      },
    });
    writeFileSync(join(rt.runtime.deps.config.dataDir, "HEARTBEAT.md"), "- check the disk\n");
    fake.respond = (body) =>
      body.model === "gate-model"
        ? { content: [{ type: "text", text: "DELIVER" }] }
        : { content: [{ type: "text", text: "Disk is 95% full." }] };
    await rt.runtime.heartbeat.tick();
    await rt.close();
    rt = undefined;
    const spans = langfuse.spans();
    const root = spans.find((s) => s.name === "heartbeat" && attr(s, "langfuse.observation.type") === "agent");
    expect(root).toBeDefined();
    const models = spans
      .filter((s) => s.traceId === root!.traceId && attr(s, "langfuse.observation.type") === "generation")
      .map((s) => attr(s, "langfuse.observation.model.name"));
    expect(models).toContain("gate-model");
    expect(models.length).toBe(2);
  });
});

describe("scheduled and webhook runs (Langfuse)", () => {
  it("each is a trace of its own kind, its generations with the model the run used", async () => {
    const langfuse = await startLangfuse(KEYS);
    stands.push(langfuse);
    let now = Date.parse("2026-06-01T08:00:00.000Z");
    rt = await startTestRuntime(fake, {
      env: { TRACING_SECRET_KEY: KEYS.secretKey, TRACING_PUBLIC_KEY: KEYS.publicKey, TRACING_BASE_URL: langfuse.url },
      runtimeOptions: { clock: () => now, scheduleTimer: false },
    });
    fake.respond = () => ({ content: [{ type: "text", text: "done" }] });
    await rt.json("PATCH", "/agents/models", { cron: "cron-model" });
    const schedule = await rt.json<{ id: string }>("POST", "/agents/schedules", {
      name: "traced",
      everySeconds: 60,
      prompt: "Summarize",
    });
    expect(schedule.status).toBe(201);
    now += 60_000;
    await rt.runtime.deps.scheduler.tick();
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "ci", deliverTo: "Chat", prompt: "build {n}" });
    const hook = await rt.request("POST", "/agents/webhooks/ci", { n: 7 });
    expect(hook.status).toBe(202);
    const { runId } = (await hook.json()) as { runId: string };
    await waitFor(async () => {
      const runs = await rt!.json<{ items: { id: string; status: string }[] }>(
        "GET",
        "/agents/webhook-subscriptions/ci/runs",
      );
      return runs.body.items.some((r) => r.id === runId && r.status === "delivered") || undefined;
    }, 15_000);
    await rt.close();
    rt = undefined;
    const spans = langfuse.spans();
    const rootOf = (kind: string) =>
      spans.find((s) => s.name === kind && attr(s, "langfuse.observation.type") === "agent");
    const modelsOf = (traceId: string | undefined) =>
      spans
        .filter((s) => s.traceId === traceId && attr(s, "langfuse.observation.type") === "generation")
        .map((s) => attr(s, "langfuse.observation.model.name"));
    const scheduled = rootOf("schedule");
    expect(scheduled).toBeDefined();
    expect(modelsOf(scheduled?.traceId)).toEqual(["cron-model"]);
    const webhook = rootOf("webhook");
    expect(webhook).toBeDefined();
    expect(attr(webhook!, "langfuse.trace.metadata.run_id")).toBe(runId);
    expect(modelsOf(webhook?.traceId)).toHaveLength(1);
    expect(modelsOf(webhook?.traceId)[0]).not.toBe("cron-model");
    expect(webhook?.traceId).not.toBe(scheduled?.traceId);
  }, 60_000);
});

describe("product telemetry (OTLP)", () => {
  it("carries ids, enums, flags and counts only: no key, token, prompt, URL or path reaches the collector", async () => {
    const otlp = await startOtlpCollector({ apiKey: "collector-key" });
    const langfuse = await startLangfuse(KEYS);
    stands.push(otlp, langfuse);
    const marker = "CANARY-7f3a9c-PROMPT";
    const url = "https://internal.example.com/secret-report?id=42";
    const path = "/home/dana/private/notes.txt";
    const providerKey = "sk-canary-provider-key-5d1e";
    const slackToken = "xoxb-canary-slack-token-0a1b";
    fake.respond = withTool;
    rt = await startTestRuntime(fake, {
      env: {
        CLOUD_B_API_KEY: providerKey,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_API_KEY: "collector-key",
        DEPLOYMENT_ENVIRONMENT: "staging",
        TRACING_SECRET_KEY: KEYS.secretKey,
        TRACING_PUBLIC_KEY: KEYS.publicKey,
        TRACING_BASE_URL: langfuse.url,
      },
    });
    await chat(rt, `${marker} read ${path}, fetch ${url} and use the token ${slackToken}`);
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "ci", deliverOnly: true, prompt: "{__raw__}" });
    const hook = await rt.request("POST", "/agents/webhooks/ci", { marker, url, path, token: slackToken });
    expect(hook.status).toBe(200);
    await rt.close();
    rt = undefined;

    const events = otlp.logRecords().map((r) => r.eventName);
    expect(events).toEqual(expect.arrayContaining(["agent.started", "turn.completed", "webhook.accepted"]));
    const turn = otlp.logRecords().find((r) => r.eventName === "turn.completed");
    expect(turn?.resource).toMatchObject({ "service.name": "agent-runtime", "deployment.environment.name": "staging" });
    // Every byte the collector received, headers included.
    const everything = otlp.everything();
    for (const secret of [
      marker,
      url,
      "internal.example.com",
      path,
      "/home/dana",
      providerKey,
      slackToken,
      KEYS.secretKey,
    ]) {
      expect(everything, `the collector received ${secret}`).not.toContain(secret);
    }
    // Langfuse spans (content) never reach the OTLP endpoint, and the runtime sends it no spans.
    expect(otlp.spans()).toEqual([]);
    expect(everything).not.toContain("langfuse");
    expect(langfuse.spans().length).toBeGreaterThan(0);
  });
});

describe("off by default", () => {
  let recorder: LocalServer;
  let connections = 0;
  beforeAll(async () => {
    recorder = await startLocalServer((_req, res) => {
      res.end();
    });
    recorder.server.on("connection", () => {
      connections += 1;
    });
  });
  afterAll(() => recorder.close());

  it("opens no socket to any collector without the variables, whatever the SDKs' own variables say", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: recorder.url,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${recorder.url}/v1/traces`,
      LANGFUSE_BASE_URL: recorder.url,
      LANGFUSE_SECRET_KEY: "sk",
      LANGFUSE_PUBLIC_KEY: "pk",
    });
    try {
      fake.respond = withTool;
      // The runtime reads its configuration from what it is given, not from this process.
      rt = await startTestRuntime(fake);
      expect(rt.runtime.deps.tracing.enabled).toBe(false);
      await chat(rt, "hello");
      await rt.close();
      rt = undefined;
      await new Promise((r) => setTimeout(r, 1200));
      expect(connections).toBe(0);
    } finally {
      process.env = saved;
    }
  });
});

describe("exporter faults", () => {
  async function turnTimes(env: Record<string, string>): Promise<number[]> {
    fake.respond = () => ({ content: [{ type: "text", text: "ok" }] });
    rt = await startTestRuntime(fake, { env });
    const times: number[] = [];
    for (let i = 0; i < 6; i++) {
      const started = performance.now();
      await chat(rt, `turn ${i}`);
      times.push(performance.now() - started);
    }
    const closing = performance.now();
    await rt.close();
    rt = undefined;
    times.push(performance.now() - closing);
    return times;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

  it("a collector and a Langfuse that hang or answer 500 change nothing for the turns", async () => {
    const baseline = await turnTimes({});
    const otlp = await startOtlpCollector();
    const langfuse = await startLangfuse(KEYS);
    stands.push(otlp, langfuse);
    otlp.behave({ hang: true });
    langfuse.behave({ status: 500 });
    const faulty = await turnTimes({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      TRACING_SECRET_KEY: KEYS.secretKey,
      TRACING_PUBLIC_KEY: KEYS.publicKey,
      TRACING_BASE_URL: langfuse.url,
    });
    const closeTime = faulty.pop() as number;
    baseline.pop();
    // An export on the turn's path would wait for the collector's 10 s timeout; within noise of a
    // loaded machine, the turns take as long as without telemetry.
    expect(median(faulty)).toBeLessThan(median(baseline) * 3 + 500);
    // Shutdown flushes for a bounded time, even against a collector that never answers.
    expect(closeTime).toBeLessThan(15_000);
  }, 60_000);
});

describe("team chat telemetry", () => {
  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  it("team_chat.connected says the mode and whether an owner is paired, never a token or an app id", async () => {
    const otlp = await startOtlpCollector();
    stands.push(otlp);
    slack = await startSlackStandIn({ botAppId: "A0TRACED" });
    rt = await startSlackRuntime(fake, slack, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, CHAT_MODE: "team" } });
    const connected = await waitFor(() => otlp.logRecords().find((r) => r.eventName === "team_chat.connected"), 15_000);
    expect(attributesOf(connected.attributes)).toEqual({
      "team_chat.mode": "team",
      "team_chat.owner_paired": false,
    });
    const started = otlp.logRecords().find((r) => r.eventName === "agent.started");
    expect(attributesOf(started?.attributes)["team_chat.enabled"]).toBe(true);
    const everything = otlp.everything();
    for (const secret of [slack.botToken, slack.appToken, "A0TRACED", slack.apiUrl]) {
      expect(everything).not.toContain(secret);
    }
  }, 60_000);
});

describe("export failures at /health", () => {
  it("counts a collector that refuses (401) and a Langfuse that answers 500; the turns go on", async () => {
    const otlp = await startOtlpCollector({ apiKey: "the-right-key" });
    const langfuse = await startLangfuse(KEYS);
    stands.push(otlp, langfuse);
    langfuse.behave({ status: 500 });
    fake.respond = () => ({ content: [{ type: "text", text: "ok" }] });
    rt = await startTestRuntime(fake, {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_API_KEY: "a-wrong-key",
        TRACING_SECRET_KEY: KEYS.secretKey,
        TRACING_PUBLIC_KEY: KEYS.publicKey,
        TRACING_BASE_URL: langfuse.url,
      },
    });
    await chat(rt, "one");
    await chat(rt, "two");
    type Health = { status: string; telemetry?: Record<string, { failedBatches: number; lastError?: string }> };
    let health: Health | undefined;
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      health = (await rt.json<Health>("GET", "/health")).body;
      if ((health.telemetry?.otlp?.failedBatches ?? 0) > 0 && (health.telemetry?.langfuse?.failedBatches ?? 0) > 0)
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(health?.status).toBe("ok");
    expect(health?.telemetry?.otlp).toMatchObject({ exported: 0, lastError: "refused (401)" });
    expect(health?.telemetry?.langfuse).toMatchObject({ exported: 0, lastError: "refused (500)" });
    expect(health?.telemetry?.otlp?.failedBatches).toBeGreaterThan(0);
    expect(health?.telemetry?.langfuse?.failedBatches).toBeGreaterThan(0);
    // Neither address nor key is shown.
    expect(JSON.stringify(health)).not.toContain("127.0.0.1");
    expect(JSON.stringify(health)).not.toContain("a-wrong-key");
    await chat(rt, "three");
  }, 60_000);

  it("a Langfuse that hangs: spans past the queue are dropped, counted there, and nothing waits", async () => {
    const langfuse = await startLangfuse(KEYS);
    stands.push(langfuse);
    langfuse.behave({ hang: true });
    rt = await startTestRuntime(fake, {
      env: { TRACING_SECRET_KEY: KEYS.secretKey, TRACING_PUBLIC_KEY: KEYS.publicKey, TRACING_BASE_URL: langfuse.url },
    });
    const { tracing } = rt.runtime.deps;
    const instant = tracing.model({
      provider: "cloud-b",
      endpoint: "instant",
      createMessage: async (request) =>
        ({
          id: "msg",
          type: "message",
          role: "assistant",
          model: request.model,
          content: [{ type: "text", text: "ok" }],
          stop_reason: "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
        }) as never,
    });
    const started = performance.now();
    await tracing.run("chat", { threadId: "thr_load" }, async () => {
      for (let i = 0; i < 3000; i++)
        await instant.createMessage({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "x" }] });
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    type Health = { telemetry?: { langfuse?: { dropped: number; lastError?: string } } };
    const health = (await rt.json<Health>("GET", "/health")).body;
    expect(health.telemetry?.langfuse?.dropped).toBeGreaterThan(0);
    expect(health.telemetry?.langfuse?.lastError).toBe("queue full");
  }, 60_000);

  it("says nothing about telemetry when export is off", async () => {
    rt = await startTestRuntime(fake);
    const health = await rt.json<Record<string, unknown>>("GET", "/health");
    expect(health.body.telemetry).toBeUndefined();
  });
});

describe("the product telemetry allowlist", () => {
  it("drops what the catalog does not allow: unknown attributes, and values not of their kind", async () => {
    const { productTelemetry } = await import("../src/observability/product-events.ts");
    const { createTelemetry } = await import("@agentplane/telemetry");
    const otlp = await startOtlpCollector();
    stands.push(otlp);
    const telemetry = createTelemetry(
      { endpoint: otlp.url, environment: "development", serviceName: "agent-runtime", serviceVersion: "t" },
      { warn: () => {} },
    );
    const events = productTelemetry(telemetry);
    events.emit("turn.completed", {
      "thread.id": "thr_01",
      "turn.steps": 2,
      // @ts-expect-error: not on the allowlist of turn.completed
      "message.text": "hello there",
    });
    // Ids must look like ids, enums must be one of their values.
    events.emit("turn.completed", { "thread.id": "https://evil.example/x", "run.source": "web" });
    // @ts-expect-error: not a value of the enum
    events.emit("webhook.rejected", { reason: "/etc/passwd" });
    await telemetry.shutdown();
    expect(events.refused).toBe(3);
    const records = otlp.logRecords();
    expect(records.map((r) => r.eventName)).toEqual(["turn.completed", "turn.completed", "webhook.rejected"]);
    expect(otlp.everything()).not.toContain("hello there");
    expect(otlp.everything()).not.toContain("evil.example");
    expect(otlp.everything()).not.toContain("passwd");
  });
});
