import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

export const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Drives `url` with autocannon for `seconds` after a short warm-up; latencies in ms. */
export async function load(
  url: string,
  headers: Record<string, string>,
  options: { seconds?: number; connections?: number } = {},
): Promise<LoadResult> {
  const run = (duration: number) =>
    autocannon({ url, headers, connections: options.connections ?? 10, duration, pipelining: 1 });
  await run(2);
  const r = await run(options.seconds ?? 8);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

export function startNode(script: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
}

export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buf += chunk.toString();
      const i = buf.indexOf("\n");
      if (i >= 0) resolve(buf.slice(0, i));
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing`)));
  });
}

export function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

export { freePort, waitForHealth } from "@agentplane/testkit";

/**
 * Latency without queueing: one request at a time over one keep-alive connection, timed with
 * sub-millisecond resolution (autocannon reports whole milliseconds). Returns ms.
 */
export async function sequentialLatency(
  url: string,
  headers: Record<string, string>,
  options: { requests?: number; warmup?: number } = {},
): Promise<LoadResult> {
  const { Agent, request } = await import("undici");
  const dispatcher = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
  const once = async () => {
    const res = await request(url, { headers, dispatcher });
    await res.body.arrayBuffer();
    return res.statusCode;
  };
  for (let i = 0; i < (options.warmup ?? 300); i++) await once();
  const samples: number[] = [];
  let non2xx = 0;
  const started = performance.now();
  for (let i = 0; i < (options.requests ?? 3000); i++) {
    const t = performance.now();
    const status = await once();
    samples.push(performance.now() - t);
    if (status < 200 || status >= 300) non2xx++;
  }
  const elapsed = (performance.now() - started) / 1000;
  await dispatcher.close();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { rps: samples.length / elapsed, p50: at(0.5), p99: at(0.99), errors: 0, non2xx };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux); undefined elsewhere. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in 1/100 s ticks
  } catch {
    return undefined;
  }
}

/** CPU time all local PostgreSQL server processes have used so far, in ms (Linux); 0 elsewhere. */
export function postgresCpuMs(): number {
  let total = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const fields = stat.split(") ")[1]!.split(" ");
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return total;
}
