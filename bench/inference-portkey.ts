// The inference pass-through side by side with Portkey's open-source AI gateway (the npm package
// @portkey-ai/gateway, pinned in bench/package.json), both in front of the same provider stand-in
// that answers at once, measured in one run with the same clients:
// - added latency, one request at a time (undici, one keep-alive connection each, alternating blocks);
// - throughput at 10 connections (autocannon), alternating round by round;
// - the Anthropic SDK, 10 calls at a time, alternating round by round.
// Ours runs the whole path (token check, rate limits, governance, spend hold, metering, usage and
// audit records in Postgres); Portkey, as started here, only forwards (no key check, no records).
// Run: npm run bench -- inference-portkey   (or node bench/inference-portkey.ts on Node 24)
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import autocannon from "autocannon";
import { firstLine, fmt, interleavedLatency, type LoadResult, REPO_ROOT } from "./lib.ts";

const BODY = JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
const PATH = "/v1/llm/cloud-b/family-1/anthropic/v1/messages";
const PORTKEY = join(REPO_ROOT, "bench/node_modules/@portkey-ai/gateway/build/start-server.js");
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);

function start(argv: string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, argv, {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
}

/** A port free right now (Portkey takes a fixed `--port`). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(ready: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const upstream = start(["bench/servers/llm-upstream.ts"]);
const children = [upstream];
try {
  const up = (JSON.parse(await firstLine(upstream)) as { url: string }).url;
  const platform = start(["bench/servers/inference.ts"], { UPSTREAM_URL: up });
  children.push(platform);
  const ours = JSON.parse(await firstLine(platform)) as { gateway: string; token: string };
  const port = await freePort();
  const portkey = start([PORTKEY, `--port=${port}`, "--headless"]);
  children.push(portkey);
  portkey.stdout?.resume();
  const portkeyUrl = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(portkeyUrl)).status > 0, "Portkey's gateway");

  const json = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
  const portkeyHeaders = {
    ...json,
    "x-api-key": "upstream-key",
    "x-portkey-provider": "anthropic",
    "x-portkey-custom-host": `${up}/anthropic/v1`,
  };
  const targets = {
    direct: [`${up}/anthropic/v1/messages`, { ...json, "x-api-key": "upstream-key" }],
    agentplane: [`${ours.gateway}${PATH}`, { ...json, authorization: `Bearer ${ours.token}` }],
    portkey: [`${portkeyUrl}/v1/messages`, portkeyHeaders],
  } as const;
  const kinds = ["direct", "agentplane", "portkey"] as const;

  const requests = Number(process.env.BENCH_REQUESTS ?? 1000);
  const [d, a, p] = (await interleavedLatency(
    kinds.map((k) => [targets[k][0], { ...targets[k][1] }]),
    { requests, body: BODY, warmup: 200 },
  )) as [LoadResult, LoadResult, LoadResult];
  for (const [name, r] of [
    ["Agentplane", a],
    ["Portkey", p],
  ] as const) {
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  }
  console.log(
    [
      `non-streaming, 1 request at a time (${requests} each, alternating blocks of 100):`,
      `  direct      p50 ${fmt(d.p50, 3)} ms  p99 ${fmt(d.p99, 3)} ms`,
      `  Agentplane  p50 ${fmt(a.p50, 3)} ms  p99 ${fmt(a.p99, 3)} ms  added p50 ${fmt(a.p50 - d.p50, 3)} ms`,
      `  Portkey     p50 ${fmt(p.p50, 3)} ms  p99 ${fmt(p.p99, 3)} ms  added p50 ${fmt(p.p50 - d.p50, 3)} ms`,
      `  added latency: Agentplane ${fmt((a.p50 - d.p50) / (p.p50 - d.p50))}x Portkey's`,
    ].join("\n"),
  );

  const cannon = async (kind: (typeof kinds)[number], duration: number) => {
    const [url, headers] = targets[kind];
    const r = await autocannon({ url, method: "POST", headers, body: BODY, connections: 10, duration });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${kind}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return r.requests.average;
  };
  const totals = { direct: 0, agentplane: 0, portkey: 0 };
  for (const kind of kinds) await cannon(kind, 1);
  console.log(`throughput, 10 connections (autocannon), ${rounds} rounds of ${seconds} s:`);
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    for (const kind of kinds) {
      const rate = await cannon(kind, seconds);
      totals[kind] += rate;
      line.push(`${kind} ${fmt(rate, 0)} req/s`);
    }
    console.log(`  round ${round}: ${line.join(", ")}`);
  }
  console.log(
    `  all rounds: Agentplane ${fmt(totals.agentplane / totals.direct)}x direct, Portkey ${fmt(totals.portkey / totals.direct)}x direct; Agentplane ${fmt(totals.agentplane / totals.portkey)}x Portkey's throughput`,
  );

  const request = { model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };
  const clients = {
    direct: new Anthropic({ baseURL: `${up}/anthropic`, apiKey: "upstream-key", maxRetries: 0 }),
    agentplane: new Anthropic({
      baseURL: `${ours.gateway}${PATH.replace(/\/v1\/messages$/, "")}`,
      apiKey: ours.token,
      maxRetries: 0,
    }),
    portkey: new Anthropic({
      baseURL: portkeyUrl,
      apiKey: "upstream-key",
      maxRetries: 0,
      defaultHeaders: { "x-portkey-provider": "anthropic", "x-portkey-custom-host": `${up}/anthropic/v1` },
    }),
  };
  const sdkRate = async (client: Anthropic, duration: number) => {
    let calls = 0;
    const start = performance.now();
    const end = start + duration * 1000;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < end) {
          await client.messages.create(request);
          calls++;
        }
      }),
    );
    return calls / ((performance.now() - start) / 1000);
  };
  const sdk = { direct: 0, agentplane: 0, portkey: 0 };
  for (const kind of kinds) await sdkRate(clients[kind], 1);
  for (let round = 0; round < rounds; round++)
    for (const kind of kinds) sdk[kind] += await sdkRate(clients[kind], seconds);
  console.log(
    [
      `through the Anthropic SDK, 10 calls at a time, ${rounds} rounds of ${seconds} s:`,
      `  direct ${fmt(sdk.direct / rounds, 0)} calls/s, Agentplane ${fmt(sdk.agentplane / rounds, 0)} (${fmt(sdk.agentplane / sdk.direct)}x direct), Portkey ${fmt(sdk.portkey / rounds, 0)} (${fmt(sdk.portkey / sdk.direct)}x direct)`,
      `  Agentplane ${fmt(sdk.agentplane / sdk.portkey)}x Portkey's rate`,
    ].join("\n"),
  );
} finally {
  for (const child of children) child.kill("SIGTERM");
}
