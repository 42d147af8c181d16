// The inference proxy as a user's code sees it: the Anthropic SDK (its own HTTP client, retries off)
// calling the provider stand-in directly, through a framework-free node:http pass-through (the
// floor of any proxy in its own process) and through the gateway (the Agentplane token in
// `x-api-key`, as the SDK sends its key), alternating round by round. One call at a time shows
// what the added latency costs a sequential caller; ten at once show the throughput left when the
// SDK client, the proxy, Postgres and the upstream share the machine's cores, and what CPU each
// of them spends a call: the budget a rate of 0.9x direct leaves is printed beside it.

import { availableParallelism } from "node:os";
import Anthropic from "@anthropic-ai/sdk";
import { fmt, postgresCpuMs, processCpuMs } from "./lib.ts";

const REQUEST = { model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };

/** CPU (ms) each process of a call has used so far: this one (the SDK client), the platform, Postgres, the upstream. */
interface CallCpu {
  client: number;
  platform: number;
  postgres: number;
  upstream: number;
}
const CPU_KEYS = ["client", "platform", "postgres", "upstream"] as const;

function cpuNow(pids: SdkPids): CallCpu {
  const own = process.cpuUsage();
  return {
    client: (own.user + own.system) / 1000,
    platform: processCpuMs(pids.platform) ?? 0,
    postgres: postgresCpuMs(),
    upstream: processCpuMs(pids.upstream) ?? 0,
  };
}

/** Calls per second with `concurrency` callers for `seconds`, and the CPU each process spent meanwhile. */
async function rate(
  client: Anthropic,
  concurrency: number,
  seconds: number,
  pids: SdkPids,
): Promise<{ rate: number; calls: number; cpu: CallCpu }> {
  const before = cpuNow(pids);
  let calls = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await client.messages.create(REQUEST);
        calls++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const after = cpuNow(pids);
  const cpu = { ...after };
  for (const key of CPU_KEYS) cpu[key] = after[key] - before[key];
  return { rate: calls / elapsed, calls, cpu };
}

/** Base URLs (the SDK appends /v1/messages) and the key each is called with. */
export interface SdkTargets {
  direct: string;
  node: string;
  gateway: { baseURL: string; token: string };
}

/** The processes whose CPU a call costs besides this one: the node:http hop and the gateway share the platform's. */
export interface SdkPids {
  platform: number | undefined;
  upstream: number | undefined;
}

export async function throughSdk(
  targets: SdkTargets,
  pids: SdkPids,
  options: { seconds: number; rounds: number },
): Promise<void> {
  const client = (baseURL: string, apiKey: string) => new Anthropic({ baseURL, apiKey, maxRetries: 0 });
  const clients = {
    direct: client(targets.direct, "upstream-key"),
    node: client(targets.node, "upstream-key"),
    gateway: client(targets.gateway.baseURL, targets.gateway.token),
  };
  const kinds = ["direct", "node", "gateway"] as const;
  console.log(
    `through the Anthropic SDK, ${options.rounds} rounds of ${options.seconds} s each (direct, node:http pass-through, gateway alternating):`,
  );
  for (const concurrency of [1, 10]) {
    const totals = { direct: 0, node: 0, gateway: 0 };
    const calls = { direct: 0, node: 0, gateway: 0 };
    const cpu = Object.fromEntries(
      kinds.map((k) => [k, { client: 0, platform: 0, postgres: 0, upstream: 0 } as CallCpu]),
    ) as Record<(typeof kinds)[number], CallCpu>;
    for (const kind of kinds) await rate(clients[kind], concurrency, 1, pids);
    for (let round = 0; round < options.rounds; round++) {
      for (const kind of kinds) {
        const r = await rate(clients[kind], concurrency, options.seconds, pids);
        totals[kind] += r.rate;
        calls[kind] += r.calls;
        for (const key of CPU_KEYS) cpu[kind][key] += r.cpu[key];
      }
    }
    const [d, n, g] = kinds.map((kind) => totals[kind] / options.rounds) as [number, number, number];
    const added = (r: number) => (concurrency === 1 ? `, +${fmt(1000 / r - 1000 / d, 3)} ms a call` : "");
    console.log(
      [
        `  ${concurrency} at a time: direct ${fmt(d, 0)} calls/s`,
        `node:http ${fmt(n, 0)} (${fmt(n / d)}x direct${added(n)})`,
        `gateway ${fmt(g, 0)} (${fmt(g / d)}x direct${added(g)}; ${fmt(g / n)}x node:http)`,
      ].join(", "),
    );
    if (concurrency === 1) continue;
    // With every process on the same cores, a rate is bounded by the CPU all of them spend a
    // call: 0.9x direct leaves at most cores / (0.9 x direct's rate) of CPU a call, client included.
    const us = (kind: (typeof kinds)[number]) => {
      const each = (ms: number) => (ms * 1000) / calls[kind];
      const all = CPU_KEYS.reduce((sum, key) => sum + each(cpu[kind][key]), 0);
      const parts = CPU_KEYS.map((key) => `${key} ${fmt(each(cpu[kind][key]), 0)}`).join(", ");
      return { all, text: `${fmt(all, 0)} us (${parts})` };
    };
    const cores = availableParallelism();
    const budget = (cores * 1e6) / (0.9 * d);
    console.log(
      [
        `  CPU per call, ${concurrency} at a time, every process on the machine:`,
        `    direct     ${us("direct").text}`,
        `    node:http  ${us("node").text}`,
        `    gateway    ${us("gateway").text}`,
        `  0.9x direct on ${cores} cores leaves ${fmt(budget, 0)} us of CPU a call for all of them; the node:http hop spends ${fmt(us("node").all, 0)}, the gateway ${fmt(us("gateway").all, 0)}`,
      ].join("\n"),
    );
  }
}
