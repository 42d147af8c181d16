// What OpenTelemetry export costs on the hot path: the same authenticated GET /v1/auth/me through
// two all-in-one platforms started side by side, one with export off (no endpoint) and one
// exporting every request's spans to a local OTLP collector stand-in, measured interleaved in one
// run (ratios, not absolute times). Run: npm run bench -- telemetry
import { randomBytes } from "node:crypto";
import { startOtlpCollector } from "@agentplane/testkit/telemetry";
import { firstLine, fmt, interleavedLatency, type LoadResult, load, startNode } from "./lib.ts";

const token = `bench_${randomBytes(24).toString("hex")}`;
const PATH = "/v1/auth/me";

const collector = await startOtlpCollector();
const off = startNode("bench/servers/all-in-one.ts", [], { AGENTPLANE_BOOTSTRAP_TOKEN: token });
const on = startNode("bench/servers/all-in-one.ts", [], {
  AGENTPLANE_BOOTSTRAP_TOKEN: token,
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
});
try {
  const [offInfo, onInfo] = (await Promise.all([firstLine(off), firstLine(on)])).map(
    (line) => JSON.parse(line) as { gateway: string },
  ) as [{ gateway: string }, { gateway: string }];
  const headers = { authorization: `Bearer ${token}` };
  const targets: [string, Record<string, string>][] = [
    [`${offInfo.gateway}${PATH}`, headers],
    [`${onInfo.gateway}${PATH}`, headers],
  ];
  // Throughput at 10 connections, one after the other, twice in alternating order.
  const busy: LoadResult[][] = [[], []];
  for (const order of [
    [0, 1],
    [1, 0],
  ]) {
    for (const i of order)
      busy[i]!.push(await load(...(targets[i] as [string, Record<string, string>]), { seconds: 6 }));
  }
  const rps = busy.map((runs) => runs.reduce((sum, r) => sum + r.rps, 0) / runs.length) as [number, number];
  const [idleOff, idleOn] = (await interleavedLatency(targets, { requests: 3000 })) as [LoadResult, LoadResult];
  const spans = collector.spans().length;
  console.log(
    [
      `GET ${PATH} through the all-in-one gateway, OpenTelemetry export off vs on (spans to a local collector):`,
      `  10 connections: off ${fmt(rps[0], 0)} req/s, on ${fmt(rps[1], 0)} req/s  -> on/off ${fmt(rps[1] / rps[0], 3)}x (aim >= 0.95)`,
      `  1 at a time:    off p50 ${fmt(idleOff.p50, 3)} ms p99 ${fmt(idleOff.p99, 3)} ms;  on p50 ${fmt(idleOn.p50, 3)} ms p99 ${fmt(idleOn.p99, 3)} ms`,
      `  added by export: p50 ${fmt(idleOn.p50 - idleOff.p50, 3)} ms (aim <= 0.1 ms), p99 ${fmt(idleOn.p99 - idleOff.p99, 3)} ms`,
      `  spans received by the collector: ${spans}; non-2xx off ${idleOff.non2xx}, on ${idleOn.non2xx}`,
    ].join("\n"),
  );
} finally {
  off.kill("SIGTERM");
  on.kill("SIGTERM");
  await collector.close();
}
