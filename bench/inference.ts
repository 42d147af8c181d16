// The inference proxy against a provider stand-in that answers at once, measured in one run:
// non-streaming added latency (p50/p99, one request at a time) through the gateway vs calling the
// upstream directly (and, as the floor of any proxy here, what a bare Hono pass-through in the same
// process adds); streaming time to first byte, added; throughput vs that bare pass-through; calls
// through the Anthropic SDK, direct vs gateway; memory per 1,000 concurrent open streams.
// Run: npm run bench -- inference   (or node bench/inference.ts on Node 24)
// INFERENCE_BENCH_PROFILE=<dir> writes a V8 CPU profile of the platform process there; read it with
// node bench/cpuprofile-summary.ts <dir>/platform.cpuprofile --after=proxy/handler.ts --skip=2
// INFERENCE_BENCH_STAGES=latency (a comma-separated list of latency, ttfb, throughput, sdk, memory;
// all by default) runs only those stages, e.g. the one-at-a-time latency alone, profiled or not.

import { execFileSync, spawn } from "node:child_process";
import autocannon from "autocannon";
import { Agent, request } from "undici";
import { throughSdk } from "./inference-sdk.ts";
import { firstLine, fmt, postgresCpuMs, processCpuMs, REPO_ROOT } from "./lib.ts";

const BODY = JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
const STREAM_BODY = BODY.replace("{", '{"stream":true,');
const PATH = "/v1/llm/cloud-b/family-1/anthropic/v1/messages";
const STAGES = ["latency", "ttfb", "throughput", "sdk", "memory"];
const stages = new Set((process.env.INFERENCE_BENCH_STAGES ?? STAGES.join(",")).split(","));
for (const stage of stages) {
  if (!STAGES.includes(stage)) throw new Error(`INFERENCE_BENCH_STAGES: ${stage} is not one of ${STAGES.join(", ")}`);
}

// BENCH_PIN_CLIENT=1: this process (the load generators and the SDK client) on CPU 0, the
// platform and the upstream stand-in on CPU 1 (Postgres, a system service, floats), as a client on
// another machine would be: what the proxy costs without the client and the proxy taking each
// other's core. Needs util-linux's taskset and two CPUs.
const PIN = process.env.BENCH_PIN_CLIENT === "1";
if (PIN) {
  execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
  console.log("CPU placement: load generators and SDK client on CPU 0; platform and upstream on CPU 1");
}

function start(script: string, env: Record<string, string>, flags: string[] = []) {
  // taskset execs the program: the child's pid is the server's own.
  const [command, ...args] = [...(PIN ? ["taskset", "-c", "1"] : []), process.execPath, ...flags, script];
  return spawn(command as string, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
}

interface Stats {
  p50: number;
  p99: number;
}

interface Target {
  url: string;
  headers: Record<string, string>;
}

/**
 * One request at a time over one keep-alive connection per target (total time, or time to first
 * body byte), the targets alternating in blocks of 100 so a change of load lands on all of them.
 * `around` wraps each block (CPU accounting per target).
 */
async function sequential(
  targets: Target[],
  body: string,
  ttfb: boolean,
  n: number,
  around: (index: number, run: () => Promise<void>) => Promise<void> = (_i, run) => run(),
): Promise<Stats[]> {
  const dispatchers = targets.map(() => new Agent({ connections: 1, keepAliveTimeout: 30_000 }));
  const once = async (i: number) => {
    const { url, headers } = targets[i] as Target;
    const t = performance.now();
    const res = await request(url, { method: "POST", headers, body, dispatcher: dispatchers[i] });
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${await res.body.text()}`);
    let first = 0;
    for await (const _chunk of res.body) {
      if (!first) first = performance.now() - t;
    }
    return ttfb ? first : performance.now() - t;
  };
  for (let i = 0; i < targets.length; i++) for (let w = 0; w < Math.min(200, n); w++) await once(i);
  const samples: number[][] = targets.map(() => []);
  const block = 100;
  for (let done = 0; done < n; done += block) {
    for (let i = 0; i < targets.length; i++) {
      await around(i, async () => {
        for (let r = 0; r < Math.min(block, n - done); r++) samples[i]?.push(await once(i));
      });
    }
  }
  await Promise.all(dispatchers.map((d) => d.close()));
  return samples.map((list) => {
    list.sort((a, b) => a - b);
    const at = (q: number) => list[Math.min(list.length - 1, Math.floor(q * list.length))] as number;
    return { p50: at(0.5), p99: at(0.99) } satisfies Stats;
  });
}

/** CPU time (ms) of each process on the machine that takes part in a throughput round. */
interface CpuSplit {
  platform: number;
  postgres: number;
  upstream: number;
  loadGenerator: number;
}
const CPU_PARTS = ["platform", "postgres", "upstream", "loadGenerator"] as const;

function cpuNow(platformPid: number | undefined, upstreamPid: number | undefined): CpuSplit {
  const own = process.cpuUsage();
  return {
    platform: processCpuMs(platformPid) ?? 0,
    postgres: postgresCpuMs(),
    upstream: processCpuMs(upstreamPid) ?? 0,
    loadGenerator: (own.user + own.system) / 1000,
  };
}

/**
 * Requests per second over `seconds` (after one second of warm-up), and the CPU each process
 * spent per request meanwhile: on two cores shared by all of them, the machine's CPU per request
 * bounds the throughput as much as the platform's own.
 */
async function throughput(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  pids: { platform: number | undefined; upstream: number | undefined },
): Promise<{ rate: number; requests: number; cpu: CpuSplit }> {
  const run = (duration: number) =>
    autocannon({ url, method: "POST", headers, body: BODY, connections: 10, duration, pipelining: 1 });
  await run(1);
  const before = cpuNow(pids.platform, pids.upstream);
  const r = await run(seconds);
  const after = cpuNow(pids.platform, pids.upstream);
  if (r.non2xx > 0 || r.errors > 0 || r.requests.total === 0) {
    throw new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors of ${r.requests.total} requests`);
  }
  const cpu = { ...before };
  for (const part of CPU_PARTS) cpu[part] = after[part] - before[part];
  return { rate: r.requests.average, requests: r.requests.total, cpu };
}

/** Microseconds of CPU per request, per process and in all, from CPU totals (ms) and a request count. */
function perRequest(cpu: CpuSplit, requests: number): string {
  const us = (ms: number) => fmt((ms * 1000) / requests, 0);
  const all = CPU_PARTS.reduce((sum, part) => sum + cpu[part], 0);
  return `${us(all)} us (platform ${us(cpu.platform)}, PostgreSQL ${us(cpu.postgres)}, upstream ${us(cpu.upstream)}, load generator ${us(cpu.loadGenerator)})`;
}

async function openStreams(url: string, headers: Record<string, string>, count: number) {
  const dispatcher = new Agent({ connections: count + 10, keepAliveTimeout: 30_000 });
  const bodies = await Promise.all(
    Array.from({ length: count }, async () => {
      const res = await request(`${url}?hold=1`, { method: "POST", headers, body: STREAM_BODY, dispatcher });
      if (res.statusCode !== 200) throw new Error(`stream answered ${res.statusCode}`);
      const it = res.body[Symbol.asyncIterator]();
      await it.next();
      return it;
    }),
  );
  return { bodies, dispatcher };
}

const upstream = start("bench/servers/llm-upstream.ts", {});
let platform: ReturnType<typeof start> | undefined;
try {
  const up = (JSON.parse(await firstLine(upstream)) as { url: string }).url;
  const profileDir = process.env.INFERENCE_BENCH_PROFILE;
  const profile = profileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-name=platform.cpuprofile"]
    : [];
  platform = start("bench/servers/inference.ts", { UPSTREAM_URL: up }, ["--expose-gc", ...profile]);
  const info = JSON.parse(await firstLine(platform)) as { gateway: string; bare: string; node: string; token: string };
  const json = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
  const auth = { ...json, authorization: `Bearer ${info.token}` };
  const direct = `${up}/anthropic/v1/messages`;
  const gateway = `${info.gateway}${PATH}`;

  const n = Number(process.env.BENCH_REQUESTS ?? 1000);
  const ms = (s: Stats) => `p50 ${fmt(s.p50, 3)} ms  p99 ${fmt(s.p99, 3)} ms`;
  // Each figure is printed as soon as it is measured.
  // Calls of the gateway are counted for its CPU; the direct and bare ones in between are not.
  const cpu = { platform: 0, postgres: 0 };
  // The bare pass-through's own added latency is the floor any proxy in this process starts from.
  const bareUrl = `${info.bare}/bare/anthropic/v1/messages`;
  // Below it, what a framework-free node:http pass-through adds: the cost of the process hop itself.
  const nodeUrl = `${info.node}/node/anthropic/v1/messages`;
  if (stages.has("latency")) {
    const [latDirect, latBare, latGateway, latNode] = (await sequential(
      [
        { url: direct, headers: json },
        { url: bareUrl, headers: json },
        { url: gateway, headers: auth },
        { url: nodeUrl, headers: json },
      ],
      BODY,
      false,
      n,
      async (i, run) => {
        if (i !== 2) return run();
        const before = { platform: processCpuMs(platform?.pid) ?? 0, postgres: postgresCpuMs() };
        await run();
        cpu.platform += (processCpuMs(platform?.pid) ?? 0) - before.platform;
        cpu.postgres += postgresCpuMs() - before.postgres;
      },
    )) as [Stats, Stats, Stats, Stats];
    const platformCpu = cpu.platform / n;
    const postgresCpu = cpu.postgres / n;
    console.log(
      [
        `non-streaming, 1 request at a time (${n} requests each, direct, bare, gateway and node:http alternating in blocks of 100):`,
        `  direct   ${ms(latDirect)}`,
        `  node     ${ms(latNode)}`,
        `  bare     ${ms(latBare)}`,
        `  gateway  ${ms(latGateway)}`,
        `  added    p50 ${fmt(latGateway.p50 - latDirect.p50, 3)} ms  p99 ${fmt(latGateway.p99 - latDirect.p99, 3)} ms`,
        `  added by the bare pass-through alone: p50 ${fmt(latBare.p50 - latDirect.p50, 3)} ms  p99 ${fmt(latBare.p99 - latDirect.p99, 3)} ms`,
        `  added by a node:http pass-through (the process hop): p50 ${fmt(latNode.p50 - latDirect.p50, 3)} ms  p99 ${fmt(latNode.p99 - latDirect.p99, 3)} ms`,
        `  gateway over the node:http floor: p50 ${fmt(latGateway.p50 - latNode.p50, 3)} ms`,
        `  CPU per gateway request: platform process ${fmt(platformCpu, 3)} ms, PostgreSQL ${fmt(postgresCpu, 3)} ms`,
      ].join("\n"),
    );
  }
  if (stages.has("ttfb")) {
    const [ttfbDirect, ttfbBare, ttfbGateway] = (await sequential(
      [
        { url: direct, headers: json },
        { url: bareUrl, headers: json },
        { url: gateway, headers: auth },
      ],
      STREAM_BODY,
      true,
      Math.round(n / 2),
    )) as [Stats, Stats, Stats];
    console.log(
      [
        `streaming time to first byte (${Math.round(n / 2)} requests):`,
        `  direct   ${ms(ttfbDirect)}`,
        `  bare     ${ms(ttfbBare)}`,
        `  gateway  ${ms(ttfbGateway)}`,
        `  added    p50 ${fmt(ttfbGateway.p50 - ttfbDirect.p50, 3)} ms (bare pass-through alone ${fmt(ttfbBare.p50 - ttfbDirect.p50, 3)} ms)`,
      ].join("\n"),
    );
  }
  // The baselines and the gateway alternate, round by round, so a change of load lands on all.
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const kinds = ["node", "bare", "helper", "gateway"] as const;
  const totals = { node: 0, bare: 0, helper: 0, gateway: 0 };
  const cpuTotals = Object.fromEntries(
    kinds.map((k) => [k, { platform: 0, postgres: 0, upstream: 0, loadGenerator: 0 } as CpuSplit]),
  ) as Record<(typeof kinds)[number], CpuSplit>;
  const targets = {
    node: [nodeUrl, json],
    bare: [bareUrl, json],
    helper: [`${info.bare}/hono-proxy/anthropic/v1/messages`, json],
    gateway: [gateway, auth],
  } as const;
  const pids = { platform: platform?.pid, upstream: upstream.pid };
  const counted = { node: 0, bare: 0, helper: 0, gateway: 0 };
  if (stages.has("throughput")) {
    console.log(`throughput, 10 connections, ${rounds} rounds of ${seconds} s each:`);
    for (let round = 1; round <= rounds; round++) {
      const rates = { node: 0, bare: 0, helper: 0, gateway: 0 };
      for (const kind of kinds) {
        const [url, headers] = targets[kind];
        const { rate, requests, cpu } = await throughput(url, headers, seconds, pids);
        rates[kind] = rate;
        counted[kind] += requests;
        totals[kind] += rate;
        for (const part of CPU_PARTS) cpuTotals[kind][part] += cpu[part];
      }
      console.log(
        `  round ${round}: node:http ${fmt(rates.node, 0)} req/s, bare pass-through ${fmt(rates.bare, 0)} req/s, hono/proxy ${fmt(rates.helper, 0)} req/s, gateway + proxy ${fmt(rates.gateway, 0)} req/s (${fmt(rates.gateway / rates.bare)}x)`,
      );
    }
    const avg = (n: number) => fmt(n / rounds, 0);
    console.log(
      [
        `  all rounds: node:http pass-through ${avg(totals.node)} req/s, bare Hono pass-through ${avg(totals.bare)} req/s, Hono's proxy helper ${avg(totals.helper)} req/s, gateway + proxy ${avg(totals.gateway)} req/s`,
        `  gateway + proxy: ${fmt(totals.gateway / totals.bare)}x the bare pass-through (${fmt(totals.gateway / totals.helper)}x Hono's proxy helper, ${fmt(totals.gateway / totals.node)}x node:http)`,
        "  CPU per request, every process on the machine (all rounds):",
        `    node:http          ${perRequest(cpuTotals.node, counted.node)}`,
        `    bare pass-through  ${perRequest(cpuTotals.bare, counted.bare)}`,
        `    hono/proxy         ${perRequest(cpuTotals.helper, counted.helper)}`,
        `    gateway + proxy    ${perRequest(cpuTotals.gateway, counted.gateway)}`,
      ].join("\n"),
    );
  }
  if (stages.has("sdk")) {
    await throughSdk(
      {
        direct: `${up}/anthropic`,
        node: `${info.node}/node/anthropic`,
        gateway: { baseURL: `${info.gateway}${PATH.replace(/\/v1\/messages$/, "")}`, token: info.token },
      },
      pids,
      { seconds, rounds },
    );
  }
  if (stages.has("memory")) {
    const mem = async () => (await (await fetch(`${info.bare}/__mem`)).json()) as { rss: number; heapUsed: number };
    const before = await mem();
    const streams = Number(process.env.BENCH_STREAMS ?? 1000);
    const open = await openStreams(gateway, auth, streams);
    const during = await mem();
    await fetch(`${up}/release`, { method: "POST" });
    await Promise.all(
      open.bodies.map(async (it) => {
        for (let r = await it.next(); !r.done; r = await it.next());
      }),
    );
    await open.dispatcher.close();
    const mib = (bytes: number) => fmt(bytes / 1024 / 1024, 1);
    console.log(
      [
        `memory, ${streams} concurrent open streams through the gateway:`,
        `  rss +${mib(during.rss - before.rss)} MiB, heap +${mib(during.heapUsed - before.heapUsed)} MiB`,
        `  per 1,000 streams: rss ${mib(((during.rss - before.rss) / streams) * 1000)} MiB, heap ${mib(((during.heapUsed - before.heapUsed) / streams) * 1000)} MiB`,
      ].join("\n"),
    );
  }
} finally {
  platform?.kill("SIGTERM");
  upstream.kill("SIGTERM");
}
