// Webhook receiver benchmark (issue "Agent runtime", Benchmark):
//   node scripts/bootstrap.mjs node bench/runtime-webhooks.ts
// Accept throughput (202/s) across 100 subscriptions while a slow model keeps every queue full,
// each run committed to SQLite before its 202; deliver-only throughput; and a bare Hono handler
// that answers 202 without storing, measured in the same run.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const ROOT = join(import.meta.dirname, "..");
const SUBSCRIPTIONS = 100;
const PER_SUBSCRIPTION = 11; // 1 running + 10 pending: every accept of a round answers 202
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
// Rounds whose subscriptions each have a run started before the round: no worker starts during it.
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 3);
const DELIVER_ONLY_SECONDS = Number(process.env.BENCH_DELIVER_ONLY_SECONDS ?? 5);
const PAYLOAD = JSON.stringify({
  event_type: "deploy.finished",
  service: "checkout",
  status: "ok",
  commit: { sha: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", message: "Release 1.2.3" },
});

// BENCH_CPU_PROF=<dir>: the runtime child writes a V8 CPU profile there when the run ends.
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
const children: ChildProcess[] = [];

/** Starts a server process (node + args) and resolves with the url it prints as JSON. */
function spawnServer(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`${args.at(-1)} exited with ${code}`)));
  });
}

/**
 * A model that never answers: every run stays `running`, so the queues fill and stay full. It
 * runs in a process of its own: in the load generator's process, accepting the runtime's model
 * connections delayed the generator's own event loop during the runtime's rounds only.
 */
function startStalledModel(): Promise<string> {
  const code = `const s = require("node:http").createServer(() => {});
s.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ url: "http://127.0.0.1:" + s.address().port })));`;
  return spawnServer(["-e", code], {});
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

interface Figures {
  requests: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  /** The load generator's own worst event-loop delay: when high, its latencies are inflated. */
  clientLagMax: number;
  /** p99 of the first request on each new connection, and of all the others. */
  firstOnConnectionP99: number;
  laterP99: number;
}

/**
 * Closed-loop load: CONNECTIONS keep-alive connections, each posting as soon as its previous
 * answer arrived, paths taken round-robin. Either a fixed number of posts or a time window.
 * Latency is timed per request; wall time around the whole run.
 */
async function load(url: string, paths: string[], opts: { amount?: number; duration?: number }): Promise<Figures> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const { hostname, port } = new URL(url);
  const latencies: number[] = [];
  const first: number[] = [];
  const later: number[] = [];
  const statuses: Record<string, number> = {};
  let issued = 0;
  const deadline = opts.duration ? performance.now() + opts.duration * 1000 : Number.POSITIVE_INFINITY;
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const more = () => (opts.amount ? issued < opts.amount : performance.now() < deadline);
  const one = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { agent, hostname, port, path, method: "POST", headers: { "content-type": "application/json" } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(PAYLOAD);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      let onThisConnection = 0;
      while (more()) {
        const path = paths[issued % paths.length] as string;
        issued++;
        const t = performance.now();
        const status = await one(path);
        const ms = performance.now() - t;
        latencies.push(ms);
        (onThisConnection++ === 0 ? first : later).push(ms);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  lag.disable();
  agent.destroy();
  const pctOf = (list: number[], p: number) => {
    const sorted = [...list].sort((a, b) => a - b);
    return Number((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0).toFixed(1));
  };
  const pct = (p: number) => pctOf(latencies, p);
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50: pct(0.5),
    p99: pct(0.99),
    statuses,
    clientLagMax: Number((lag.max / 1e6).toFixed(1)),
    firstOnConnectionP99: pctOf(first, 0.99),
    laterP99: pctOf(later, 0.99),
  };
}

/** Round-robin over the subscriptions: with PER_SUBSCRIPTION posts each, no queue overflows. */
function roundPaths(round: number): string[] {
  return Array.from({ length: SUBSCRIPTIONS }, (_, i) => `/agents/webhooks/r${round}-s${i}`);
}

function combine(list: Figures[]): Figures {
  const requests = list.reduce((s, f) => s + f.requests, 0);
  const seconds = list.reduce((s, f) => s + f.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const f of list) for (const [k, v] of Object.entries(f.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    requests,
    seconds,
    perSecond: requests / seconds,
    // Rounds are equal in size, so the worst round's percentile bounds the combined one.
    p50: Math.max(...list.map((f) => f.p50)),
    p99: Math.max(...list.map((f) => f.p99)),
    statuses,
    clientLagMax: Math.max(...list.map((f) => f.clientLagMax)),
    firstOnConnectionP99: Math.max(...list.map((f) => f.firstOnConnectionP99)),
    laterP99: Math.max(...list.map((f) => f.laterP99)),
  };
}

const fmt = (f: Figures) =>
  `${f.perSecond.toFixed(0).padStart(6)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms  ` +
  `(${f.requests} requests in ${f.seconds.toFixed(2)} s, statuses ${JSON.stringify(f.statuses)}, client lag max ${f.clientLagMax} ms; ` +
  `p99 first request per connection ${f.firstOnConnectionP99} ms, later ${f.laterP99} ms)`;

async function main(): Promise<void> {
  const modelUrl = await startStalledModel();
  const home = mkdtempSync(join(tmpdir(), "agentplane-bench-"));
  const profile = CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
  const runtimeUrl = await spawnServer([...profile, join(ROOT, "apps/agent-runtime/src/main.ts")], {
    AGENT_HOME: home,
    PORT: "0",
    HOST: "127.0.0.1",
    LLM_PROVIDER: "cloud-b",
    CLOUD_B_API_KEY: "bench",
    CLOUD_B_BASE_URL: `${modelUrl}/anthropic/v1`,
    LOG_LEVEL: "info",
  });
  const runtime = children.at(-1) as ChildProcess;
  const baselineUrl = await spawnServer([join(ROOT, "apps/agent-runtime/src/bench/bare-hono.ts")], {});
  await call(runtimeUrl, "PUT", "/agents/webhooks/enabled", { enabled: true });
  // Round 0 warms both servers up and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      await call(runtimeUrl, "POST", "/agents/webhook-subscriptions", { name: `r${round}-s${i}`, deliverTo: "Chat" });
    }
  }
  await call(runtimeUrl, "POST", "/agents/webhook-subscriptions", {
    name: "notify",
    deliverOnly: true,
    deliverTo: "Chat",
    prompt: "{service} deployed {commit.sha}: {status}",
  });

  const amount = SUBSCRIPTIONS * PER_SUBSCRIPTION;
  const accepted: Figures[] = [];
  const baseline: Figures[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const a = await load(runtimeUrl, roundPaths(round), { amount });
    const b = await load(baselineUrl, roundPaths(round), { amount });
    if (round > 0) {
      accepted.push(a);
      baseline.push(b);
    }
    if (process.env.BENCH_VERBOSE)
      process.stdout.write(`round ${round}: runtime ${fmt(a)}\n         bare    ${fmt(b)}\n`);
  }
  // The same rounds with every subscription's worker already running (its first run posted and
  // started before the round): what remains is accepting and storing, without worker starts.
  const warm: Figures[] = [];
  for (let round = 0; round < WARM_ROUNDS; round++) {
    const paths = Array.from({ length: SUBSCRIPTIONS }, (_, i) => `/agents/webhooks/w${round}-s${i}`);
    for (const [i] of paths.entries()) {
      await call(runtimeUrl, "POST", "/agents/webhook-subscriptions", { name: `w${round}-s${i}`, deliverTo: "Chat" });
    }
    await load(runtimeUrl, paths, { amount: SUBSCRIPTIONS });
    await new Promise((r) => setTimeout(r, 2000));
    warm.push(await load(runtimeUrl, paths, { amount: SUBSCRIPTIONS * (PER_SUBSCRIPTION - 1) }));
    if (process.env.BENCH_VERBOSE) process.stdout.write(`warm round ${round}: runtime ${fmt(warm.at(-1)!)}\n`);
  }

  // Every queue is full now: the same subscriptions answer 429 from here on.
  const overflow = await load(runtimeUrl, roundPaths(1), { amount });

  // Each accepted run is a committed row before its 202: count them back through the API.
  let stored = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const runs = await call(runtimeUrl, "GET", `/agents/webhook-subscriptions/r${round}-s${i}/runs?limit=200`);
      stored += (runs.items as unknown[]).length;
    }
  }

  const deliverOnly = await load(runtimeUrl, ["/agents/webhooks/notify"], { duration: DELIVER_ONLY_SECONDS });
  const deliverBaseline = await load(baselineUrl, ["/agents/webhooks/notify"], { duration: DELIVER_ONLY_SECONDS });

  const acc = combine(accepted);
  const base = combine(baseline);
  const lines = [
    `Webhook receiver benchmark — ${SUBSCRIPTIONS} subscriptions, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${amount} posts, Node ${process.versions.node}`,
    `accept (202, stored)      ${fmt(acc)}`,
    `bare Hono 202 (no store)  ${fmt(base)}`,
    ...(warm.length ? [`accept, workers running   ${fmt(combine(warm))}`] : []),
    `  ratio runtime/baseline  throughput ${(acc.perSecond / base.perSecond).toFixed(2)}  p99 ${(acc.p99 / Math.max(1, base.p99)).toFixed(2)}x`,
    `  runs stored             ${stored} of ${acc.statuses["202"] ?? 0} accepted`,
    `queue full (429)          ${fmt(overflow)}`,
    `deliver-only (200)        ${fmt(deliverOnly)}`,
    `bare Hono (same window)   ${fmt(deliverBaseline)}`,
    `  ratio runtime/baseline  throughput ${(deliverOnly.perSecond / deliverBaseline.perSecond).toFixed(2)}  p99 ${(deliverOnly.p99 / Math.max(1, deliverBaseline.p99)).toFixed(2)}x`,
    `aim: >= 3000 accepted/s with p99 < 20 ms — ${acc.perSecond >= 3000 && acc.p99 < 20 ? "met" : "NOT met"}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  if (CPU_PROF_DIR) await stopForProfile(runtime);
}

/** A profiled child must exit on its own (SIGTERM → graceful close) for V8 to write the profile. */
function stopForProfile(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

try {
  await main();
} finally {
  for (const child of children) child.kill("SIGKILL");
}
