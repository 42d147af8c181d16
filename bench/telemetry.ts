// What telemetry costs on the hot paths, each leg side by side in one run (ratios, not absolute
// times), the exporting side sending to local stand-ins of an OTLP collector and of Langfuse:
// 1. Gateway `GET /v1/auth/me`: two all-in-one platforms, OpenTelemetry export off and on.
// 2. The inference pass-through (`POST /v1/llm/cloud-b/…/messages` to an instant upstream): two
//    all-in-one platforms, export off and on.
// 3. A runtime chat turn on an instant model: two runtimes in this process, one with LLM tracing
//    (Langfuse) and product telemetry (OTLP) on, one with both off.
// The platforms export to a sink in a process of its own (bench/servers/otlp-sink.ts), as a real
// collector is elsewhere: receiving costs the load generator nothing.
// Run: npm run bench -- telemetry   (BENCH_SECONDS=6 per load run, BENCH_TURNS=150,
// BENCH_LEGS=gateway,inference,turn)
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { startLangfuse, startOtlpCollector } from "@agentplane/testkit/telemetry";
import { createRuntime } from "../apps/agent-runtime/src/runtime.ts";
import { runAgentTurn } from "../apps/agent-runtime/src/services/agent-turns.ts";
import { firstLine, fmt, interleavedLatency, type LoadResult, load, processCpuMs, startNode } from "./lib.ts";
import { instantModelConfig, percentile, silent, startInstantModel } from "./runtime-lib.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const TURNS = Number(process.env.BENCH_TURNS ?? 150);
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;

const sinkProcess = startNode("bench/servers/otlp-sink.ts", [], {});
const sink = JSON.parse(await firstLine(sinkProcess)) as { url: string };
const sinkSpans = async () =>
  ((await (await fetch(`${sink.url}/__count`)).json()) as { spans: number; requests: number }).spans;
type Target = [string, Record<string, string>];

/**
 * Throughput at 10 connections (off, on, on, off), one-at-a-time latency interleaved, and the CPU
 * each platform process spent per request in both (from /proc: what export costs the process
 * itself, whatever else the shared machine is doing).
 */
async function compare(targets: [Target, Target], pids: [number | undefined, number | undefined], body?: string) {
  const post = body ? { body } : {};
  const busy: LoadResult[][] = [[], []];
  const cpu = [0, 0];
  const served = [0, 0];
  for (const i of [0, 1, 1, 0]) {
    const before = processCpuMs(pids[i]) ?? 0;
    const result = await load(...targets[i]!, { seconds: SECONDS, ...post });
    // The 2 s warm-up of `load` runs at about the same rate.
    cpu[i]! += (processCpuMs(pids[i]) ?? 0) - before;
    served[i]! += result.rps * (SECONDS + 2);
    busy[i]!.push(result);
  }
  const rps = busy.map((runs) => runs.reduce((sum, r) => sum + r.rps, 0) / runs.length) as [number, number];
  const non2xx = busy.flat().reduce((n, r) => n + r.non2xx + r.errors, 0);
  const [off, on] = (await interleavedLatency(targets, { requests: 2000, ...post })) as [LoadResult, LoadResult];
  const perRequest = cpu.map((ms, i) => (ms * 1000) / (served[i] || 1)) as [number, number];
  return [
    `  10 connections: off ${fmt(rps[0], 0)} req/s, on ${fmt(rps[1], 0)} req/s  -> on/off ${fmt(rps[1] / rps[0], 3)}x (aim >= 0.95)`,
    `  platform CPU per request at 10 connections: off ${fmt(perRequest[0], 0)} us, on ${fmt(perRequest[1], 0)} us  -> on/off ${fmt(perRequest[1] / perRequest[0], 3)}x`,
    `  1 at a time:    off p50 ${fmt(off.p50, 3)} ms p99 ${fmt(off.p99, 3)} ms;  on p50 ${fmt(on.p50, 3)} ms p99 ${fmt(on.p99, 3)} ms`,
    `  added by export: p50 ${fmt(on.p50 - off.p50, 3)} ms (aim <= 0.1 ms), p99 ${fmt(on.p99 - off.p99, 3)} ms;  failed requests ${non2xx + off.non2xx + on.non2xx}`,
  ].join("\n");
}

async function gatewayLeg(): Promise<string> {
  const token = `bench_${randomBytes(24).toString("hex")}`;
  const off = startNode("bench/servers/all-in-one.ts", [], { AGENTPLANE_BOOTSTRAP_TOKEN: token });
  const on = startNode("bench/servers/all-in-one.ts", [], {
    AGENTPLANE_BOOTSTRAP_TOKEN: token,
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
  });
  try {
    const [a, b] = (await Promise.all([firstLine(off), firstLine(on)])).map(
      (line) => JSON.parse(line) as { gateway: string },
    ) as [{ gateway: string }, { gateway: string }];
    const headers = { authorization: `Bearer ${token}` };
    const before = await sinkSpans();
    const lines = await compare(
      [
        [`${a.gateway}/v1/auth/me`, headers],
        [`${b.gateway}/v1/auth/me`, headers],
      ],
      [off.pid, on.pid],
    );
    await new Promise((r) => setTimeout(r, 1500));
    return `1. GET /v1/auth/me through the all-in-one gateway, OpenTelemetry export off vs on:\n${lines}\n  spans received: ${(await sinkSpans()) - before}`;
  } finally {
    off.kill("SIGTERM");
    on.kill("SIGTERM");
  }
}

async function inferenceLeg(): Promise<string> {
  const upstream = startNode("bench/servers/llm-upstream.ts", [], {});
  const up = (JSON.parse(await firstLine(upstream)) as { url: string }).url;
  const off = startNode("bench/servers/inference.ts", [], { UPSTREAM_URL: up });
  const on = startNode("bench/servers/inference.ts", [], {
    UPSTREAM_URL: up,
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
  });
  try {
    const [a, b] = (await Promise.all([firstLine(off), firstLine(on)])).map(
      (line) => JSON.parse(line) as { gateway: string; token: string },
    ) as [{ gateway: string; token: string }, { gateway: string; token: string }];
    const body = JSON.stringify({
      model: "claude-haiku-4-5",
      max_tokens: 64,
      messages: [{ role: "user", content: "hi" }],
    });
    const path = "/v1/llm/cloud-b/family-1/anthropic/v1/messages";
    const headers = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    const before = await sinkSpans();
    const lines = await compare(
      [
        [`${a.gateway}${path}`, headers(a.token)],
        [`${b.gateway}${path}`, headers(b.token)],
      ],
      [off.pid, on.pid],
      body,
    );
    await new Promise((r) => setTimeout(r, 1500));
    return `2. The inference pass-through (POST ${path}, instant upstream), export off vs on:\n${lines}\n  spans received: ${(await sinkSpans()) - before}`;
  } finally {
    off.kill("SIGTERM");
    on.kill("SIGTERM");
    upstream.kill("SIGTERM");
  }
}

async function turnLeg(): Promise<string> {
  const collector = await startOtlpCollector();
  const keys = { publicKey: "pk-bench", secretKey: "sk-bench" };
  const langfuse = await startLangfuse(keys);
  const model = await startInstantModel();
  const offConfig = instantModelConfig(model.url);
  const onConfig = instantModelConfig(model.url, {
    TRACING_SECRET_KEY: keys.secretKey,
    TRACING_PUBLIC_KEY: keys.publicKey,
    TRACING_BASE_URL: langfuse.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  });
  const runtimes = [
    await createRuntime(offConfig, { logger: silent, scheduleTimer: false }),
    await createRuntime(onConfig, { logger: silent, scheduleTimer: false }),
  ] as const;
  const logsBefore = collector.logRecords().length;
  try {
    const threads = await Promise.all(
      runtimes.map(async (rt) =>
        Promise.all(
          Array.from(
            { length: TURNS + 10 },
            async () => (await rt.deps.messages.createThread({ kind: "webhook", title: "bench" })).id,
          ),
        ),
      ),
    );
    let n = 0;
    const turn = (i: 0 | 1) =>
      runAgentTurn(runtimes[i].deps, {
        threadId: threads[i]![n]!,
        text: "use a tool then answer",
        source: "bench",
      });
    for (; n < 10; n++) for (const i of [0, 1] as const) await turn(i);
    const samples: [number[], number[]] = [[], []];
    // Alternating: a change of the machine's load lands on both alike.
    for (; n < TURNS + 10; n++) {
      for (const i of (n % 2 ? [0, 1] : [1, 0]) as (0 | 1)[]) {
        const t = performance.now();
        await turn(i);
        samples[i].push(performance.now() - t);
      }
    }
    const [off, on] = samples.map((s) => ({ p50: percentile(s, 50), p95: percentile(s, 95) })) as [
      { p50: number; p95: number },
      { p50: number; p95: number },
    ];
    await new Promise((r) => setTimeout(r, 2500));
    return [
      `3. A chat turn with a tool call (2 model calls, instant model), LLM tracing + product telemetry off vs on (${TURNS} turns each):`,
      `  off p50 ${fmt(off.p50, 3)} ms p95 ${fmt(off.p95, 3)} ms;  on p50 ${fmt(on.p50, 3)} ms p95 ${fmt(on.p95, 3)} ms`,
      `  on/off p50 ${fmt(on.p50 / off.p50, 3)}x, added p50 ${fmt(on.p50 - off.p50, 3)} ms`,
      `  Langfuse spans received: ${langfuse.spans().length}; OTLP log records: ${collector.logRecords().length - logsBefore}`,
    ].join("\n");
  } finally {
    for (const rt of runtimes) await Promise.race([rt.close(), new Promise((r) => setTimeout(r, 3000))]);
    model.close();
    await langfuse.close();
    await collector.close();
    for (const config of [offConfig, onConfig])
      rmSync(config.env.AGENT_HOME as string, { recursive: true, force: true });
  }
}

try {
  const only = process.env.BENCH_LEGS?.split(",");
  const legs: [string, () => Promise<string>][] = [
    ["gateway", gatewayLeg],
    ["inference", inferenceLeg],
    ["turn", turnLeg],
  ];
  for (const [name, leg] of legs) if (!only || only.includes(name)) console.log(`${await leg()}\n`);
} finally {
  sinkProcess.kill("SIGTERM");
}
