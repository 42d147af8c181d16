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
/**
 * Two targets measured one request at a time, in alternating blocks of `block` requests (each on
 * its own keep-alive connection), so that a change in the machine's load during the run weighs on
 * both alike instead of on whichever ran second. `around(i, run)` wraps every block of target `i`
 * (to count the CPU it used, say).
 */
export async function interleavedLatency(
  targets: [url: string, headers: Record<string, string>][],
  options: {
    requests?: number;
    warmup?: number;
    block?: number;
    /** Sent with every request as a POST (else GETs). */
    body?: string;
    around?: (index: number, run: () => Promise<void>) => Promise<void>;
  } = {},
): Promise<LoadResult[]> {
  const { Agent, request } = await import("undici");
  const dispatchers = targets.map(() => new Agent({ connections: 1, keepAliveTimeout: 30_000 }));
  const once = async (i: number) => {
    const [url, headers] = targets[i]!;
    const res = await request(url, {
      headers,
      dispatcher: dispatchers[i]!,
      ...(options.body === undefined ? {} : { method: "POST" as const, body: options.body }),
    });
    await res.body.arrayBuffer();
    return res.statusCode;
  };
  for (let i = 0; i < targets.length; i++) for (let w = 0; w < (options.warmup ?? 300); w++) await once(i);
  const samples: number[][] = targets.map(() => []);
  const non2xx = targets.map(() => 0);
  const elapsed = targets.map(() => 0);
  const requests = options.requests ?? 3000;
  const block = options.block ?? 100;
  const around = options.around ?? ((_i, run) => run());
  for (let done = 0; done < requests; done += block) {
    for (let i = 0; i < targets.length; i++) {
      await around(i, async () => {
        const started = performance.now();
        for (let r = 0; r < Math.min(block, requests - done); r++) {
          const t = performance.now();
          const status = await once(i);
          samples[i]!.push(performance.now() - t);
          if (status < 200 || status >= 300) non2xx[i]!++;
        }
        elapsed[i]! += performance.now() - started;
      });
    }
  }
  await Promise.all(dispatchers.map((d) => d.close()));
  return samples.map((list, i) => {
    list.sort((a, b) => a - b);
    const at = (q: number) => list[Math.min(list.length - 1, Math.floor(q * list.length))]!;
    return { rps: list.length / (elapsed[i]! / 1000), p50: at(0.5), p99: at(0.99), errors: 0, non2xx: non2xx[i]! };
  });
}

export async function load(
  url: string,
  headers: Record<string, string>,
  options: { seconds?: number; connections?: number; body?: string } = {},
): Promise<LoadResult> {
  const post = options.body === undefined ? {} : { method: "POST" as const, body: options.body };
  const run = (duration: number) =>
    autocannon({ url, headers, connections: options.connections ?? 10, duration, pipelining: 1, ...post });
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
