// Agent runtime core benchmark (issue "Agent runtime core", Benchmark):
//   node scripts/bootstrap.mjs node bench/runtime-core.ts
// (Memory search has its own benchmark: bench/runtime-memory.ts.)
// 1. A tool-loop turn (model → tool → model, every step stored) against the bare model calls it
//    makes, on an instant local model speaking the Messages API.
// 2. Live fan-out: one delivered message to 100 SSE followers of a thread, against 1 follower.
// BENCH_TURNS (100) and BENCH_FANOUT_MESSAGES (50) change the sizes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../apps/agent-runtime/src/config.ts";
import { WorkerModelClient } from "../apps/agent-runtime/src/models/worker-client.ts";
import { createRuntime } from "../apps/agent-runtime/src/runtime.ts";
import { runAgentTurn } from "../apps/agent-runtime/src/services/agent-turns.ts";
import { fmt } from "./lib.ts";
import { instantModelConfig, percentile, silent, startInstantModel } from "./runtime-lib.ts";

const TURNS = Number(process.env.BENCH_TURNS ?? 100);
const FANOUT_MESSAGES = Number(process.env.BENCH_FANOUT_MESSAGES ?? 50);

const line = (label: string, samples: number[]) =>
  `${label.padEnd(34)} p50 ${fmt(percentile(samples, 50), 3).padStart(8)} ms   p95 ${fmt(percentile(samples, 95), 3).padStart(8)} ms`;

async function turnBench(): Promise<void> {
  console.log("\n-- tool-loop turn vs bare model calls (instant local model, model calls in the worker thread) --");
  const model = await startInstantModel();
  const home = mkdtempSync(join(tmpdir(), "bench-turn-"));
  const config = instantModelConfig(model.url, { AGENT_HOME: home });
  const client = new WorkerModelClient(config, { maxRetries: 0 });
  const runtime = await createRuntime(config, { logger: silent, model: client, scheduleTimer: false });
  const deps = runtime.deps;
  const request = { model: "claude-sonnet-4-6", max_tokens: 256, messages: [{ role: "user" as const, content: "hi" }] };
  const threadOf = async () => (await deps.messages.createThread({ kind: "webhook", title: "bench" })).id;
  const threads = await Promise.all(Array.from({ length: 2 * TURNS + 20 }, threadOf));
  let next = 0;
  const runs: Record<"bare" | "plain" | "tool", () => Promise<unknown>> = {
    bare: () => client.createMessage(request, { onText: () => undefined }),
    plain: () => runAgentTurn(deps, { threadId: threads[next++] as string, text: "say done", source: "bench" }),
    tool: () =>
      runAgentTurn(deps, { threadId: threads[next++] as string, text: "use a tool then answer", source: "bench" }),
  };
  for (let i = 0; i < 5; i++) for (const run of Object.values(runs)) await run();
  const samples = { bare: [] as number[], plain: [] as number[], tool: [] as number[] };
  // Alternating rounds: the machine's load changes affect the baseline and the turns alike.
  for (let i = 0; i < TURNS; i++) {
    for (const key of ["bare", "plain", "tool"] as const) {
      const t = performance.now();
      await runs[key]();
      samples[key].push(performance.now() - t);
    }
  }
  const { bare, plain, tool } = samples;
  console.log(`  ${line("bare model call (baseline)", bare)}`);
  console.log(`  ${line("turn, 1 step (1 model call)", plain)}`);
  console.log(`  ${line("turn, tool loop (2 calls + tool)", tool)}`);
  const p50 = (s: number[]) => percentile(s, 50);
  console.log(
    `  overhead per turn p50: 1 step ${fmt(p50(plain) - p50(bare), 3)} ms (${fmt(p50(plain) / p50(bare))}x a bare call); ` +
      `tool loop ${fmt(p50(tool) - 2 * p50(bare), 3)} ms over its 2 calls (${fmt(p50(tool) / (2 * p50(bare)))}x)`,
  );
  // A checkpoint still copying the WAL back is not waited for past 2 s.
  await Promise.race([runtime.close(), new Promise((r) => setTimeout(r, 2000))]);
  await client.close();
  model.close();
  rmSync(home, { recursive: true, force: true });
}

async function fanoutBench(): Promise<void> {
  console.log("\n-- live fan-out: one delivered message to N SSE followers of a thread --");
  const home = mkdtempSync(join(tmpdir(), "bench-sse-"));
  const config = loadConfig({
    AGENT_HOME: home,
    LLM_PROVIDER: "cloud-b",
    CLOUD_B_API_KEY: "bench",
    CLOUD_B_RESOURCE_NAME: "bench",
    CLOUD_B_EMBEDDING_MODEL_ID: "",
    HEARTBEAT_INTERVAL_MINUTES: "0",
  });
  const runtime = await createRuntime(config, { logger: silent, scheduleTimer: false });
  const { url } = await runtime.listen(0, "127.0.0.1");
  const thread = runtime.deps.messages.mainWebThreadId();
  const results: Record<number, number[]> = {};
  for (const followers of [1, 100]) {
    const controllers: AbortController[] = [];
    let waiting: { count: number; done: () => void } | undefined;
    const received = () => {
      if (waiting && --waiting.count === 0) waiting.done();
    };
    await Promise.all(
      Array.from({ length: followers }, async () => {
        const controller = new AbortController();
        controllers.push(controller);
        const res = await fetch(`${url}/agents/threads/${thread}/events`, { signal: controller.signal });
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        void (async () => {
          const decoder = new TextDecoder();
          let buffer = "";
          try {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) return;
              // Whole frames only: a frame may arrive split across reads.
              buffer += decoder.decode(value, { stream: true });
              const frames = buffer.split("\n\n");
              buffer = frames.pop() ?? "";
              for (const frame of frames) if (frame.includes("event: message")) received();
            }
          } catch {
            // Closed.
          }
        })();
      }),
    );
    while (runtime.deps.live.followers(thread) < followers) await new Promise((r) => setTimeout(r, 10));
    const samples: number[] = [];
    for (let i = 0; i < FANOUT_MESSAGES + 5; i++) {
      const all = new Promise<void>((done) => {
        waiting = { count: followers, done };
      });
      const t = performance.now();
      const row = await runtime.deps.messages.append({
        threadId: thread,
        role: "assistant",
        content: [{ type: "text", text: `delivery ${i}` }],
        text: `delivery ${i}`,
        internal: false,
        source: "bench",
      });
      runtime.deps.live.publishMessage(row);
      await all;
      if (i >= 5) samples.push(performance.now() - t);
    }
    results[followers] = samples;
    for (const c of controllers) c.abort();
    while (runtime.deps.live.followers(thread) > 0) await new Promise((r) => setTimeout(r, 10));
  }
  console.log(`  ${line("1 follower (baseline)", results[1] ?? [])}`);
  console.log(`  ${line("100 followers, all received", results[100] ?? [])}`);
  console.log(`  100 / 1 p50: ${fmt(percentile(results[100] ?? [], 50) / percentile(results[1] ?? [], 50))}x`);
  // As in the turn part: a checkpoint still copying the WAL back is not waited for past 2 s.
  await Promise.race([runtime.close(), new Promise((r) => setTimeout(r, 2000))]);
  rmSync(home, { recursive: true, force: true });
}

const only = process.env.BENCH_PART;
if (!only || only === "turn") await turnBench();
if (!only || only === "fanout") await fanoutBench();
process.exit(0);
