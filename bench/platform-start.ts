// The all-in-one platform's start and footprint: the first start (the embedded database initialised)
// and warm restarts to a healthy /health, its resident memory idle and after 1,000 mixed requests.
// Twice: with AGENT_RUNTIME=off, then on (the `npm start` default; ready when the runtime's /health
// answers too), whose first start also builds the console and the runtime's web UI (their builds
// marked stale first). Baselines measured in the same run: `node -e 0` for start, a bare
// PGlite.create reopening a data dir (its default settings) for memory. Aims: restart <= 3 s; idle
// RSS < 300 MB.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../apps/platform/src/main.ts", import.meta.url));
const CONSOLE_BUILD = fileURLToPath(new URL("../apps/console/build.ts", import.meta.url));
const WEB_BUILD = fileURLToPath(new URL("../apps/agent-runtime/scripts/build-web.ts", import.meta.url));
/** The stamps that make the two builds current; a wrong one makes the next start rebuild. */
const STAMPS = [
  fileURLToPath(new URL("../apps/console/dist/.source-hash", import.meta.url)),
  fileURLToPath(new URL("../apps/agent-runtime/web/dist/.source-hash", import.meta.url)),
];
const RESTARTS = Number(process.env.BENCH_START_RESTARTS ?? 3);
const MIB = 2 ** 20;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resident set of one process, from /proc (bytes). */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024;
}

function timedNode(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", () => resolve(performance.now() - started));
  });
}

interface Started {
  child: ChildProcess;
  ms: number;
  url: string;
  /** The agent runtime's own URL (runtime on). */
  runtimeUrl?: string;
  output: () => string;
}

async function healthy(url: string): Promise<boolean> {
  return fetch(`${url}/health`)
    .then(async (r) => {
      await r.arrayBuffer();
      return r.ok;
    })
    .catch(() => false);
}

async function startPlatform(dataDir: string, runtime: boolean): Promise<Started> {
  const port = await freePort();
  const runtimePort = await freePort();
  const started = performance.now();
  // As `npm start` runs it (scripts/bootstrap.mjs).
  const child = spawn(process.execPath, ["--max-semi-space-size=2", "--liftoff-only", MAIN], {
    env: {
      ...process.env,
      AGENTPLANE_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      AGENT_RUNTIME: runtime ? "on" : "off",
      AGENT_RUNTIME_PORT: String(runtimePort),
      LOG_LEVEL: "warn",
      REDIS_URL: "",
      DATABASE_URL: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (c) => {
    output += c;
  });
  child.stderr?.on("data", (c) => {
    output += c;
  });
  const url = `http://127.0.0.1:${port}`;
  const runtimeUrl = `http://127.0.0.1:${runtimePort}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the platform exited ${child.exitCode}:\n${output.slice(-2000)}`);
    if ((await healthy(url)) && (!runtime || (await healthy(runtimeUrl)))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, ms: performance.now() - started, url, ...(runtime ? { runtimeUrl } : {}), output: () => output };
}

async function stop(p: Started): Promise<void> {
  const exited = new Promise((r) => p.child.once("exit", r));
  p.child.kill("SIGTERM");
  await exited;
}

/**
 * A bare PGlite.create with its default settings, in its own process, reopening a data directory
 * an earlier process initialised (as a restart does): the embedded database's floor as shipped.
 */
async function barePglite(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "bench-pglite-"));
  await openOnce(dir);
  const rss = await openOnce(dir);
  rmSync(dir, { recursive: true, force: true });
  return rss;
}

async function openOnce(dir: string): Promise<number> {
  const script = `const { PGlite } = await import("@electric-sql/pglite");
const pg = await PGlite.create({ dataDir: ${JSON.stringify(join(dir, "pgdata"))} });
await pg.query("select 1");
await new Promise((r) => setTimeout(r, 2000));
process.stdout.write(String(process.memoryUsage().rss));
await pg.close();`;
  const cwd = fileURLToPath(new URL("../packages/db/", import.meta.url));
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let text = "";
    child.stdout.on("data", (c) => {
      text += c;
    });
    child.on("error", reject);
    child.on("close", () => resolve(text));
  });
  return Number(out);
}

/**
 * 1,000 requests across services: health, the OpenAPI document, the console, an unauthenticated
 * API call; with the runtime on, also its web UI, health and thread list.
 */
async function mixedRequests(p: Started, n: number): Promise<void> {
  const urls = ["/health", "/v1/openapi.json", "/", "/v1/orgs", "/v1/auth/me", "/docs"].map(
    (path) => `${p.url}${path}`,
  );
  if (p.runtimeUrl) urls.push(...["/", "/health", "/agents/threads"].map((path) => `${p.runtimeUrl}${path}`));
  let i = 0;
  const worker = async () => {
    while (i < n) {
      const url = urls[i++ % urls.length] as string;
      await (await fetch(url)).arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** Both web bundles built and current, outside the measured starts. */
function buildBundles(): void {
  for (const script of [CONSOLE_BUILD, WEB_BUILD]) {
    const res = spawnSync(process.execPath, [script], { stdio: ["ignore", "ignore", "inherit"] });
    if (res.status !== 0) throw new Error(`${script} failed (exit ${res.status})`);
  }
}

function markBundlesStale(): void {
  for (const stamp of STAMPS) if (existsSync(stamp)) writeFileSync(stamp, "stale");
}

interface Figures {
  first: Started;
  firstIdleRss: number;
  restarts: number[];
  idleRss: number;
  busyRss: number;
}

const idle = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** A first start on a fresh data dir (after `beforeFirst`), then warm restarts on it; RSS of the last one. */
async function measure(dataDir: string, runtime: boolean, beforeFirst: () => void = () => {}): Promise<Figures> {
  beforeFirst();
  const first = await startPlatform(dataDir, runtime);
  await idle(3000);
  const firstIdleRss = rssOf(first.child.pid as number);
  await stop(first);
  const restarts: number[] = [];
  let idleRss = 0;
  let busyRss = 0;
  for (let r = 0; r < RESTARTS; r++) {
    const p = await startPlatform(dataDir, runtime);
    restarts.push(p.ms);
    if (r === RESTARTS - 1) {
      await idle(3000);
      idleRss = rssOf(p.child.pid as number);
      await mixedRequests(p, 1000);
      await idle(1000);
      busyRss = rssOf(p.child.pid as number);
    }
    await stop(p);
  }
  return { first, firstIdleRss, restarts, idleRss, busyRss };
}

const offDir = mkdtempSync(join(tmpdir(), "bench-platform-"));
const onDir = mkdtempSync(join(tmpdir(), "bench-platform-runtime-"));
try {
  const nodeMs = await timedNode(["-e", "0"]);
  const pgliteRss = await barePglite();
  buildBundles();
  const off = await measure(offDir, false);
  const on = await measure(onDir, true, markBundlesStale);

  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(`start, wall time to a healthy /health (node -e 0 in the same run: ${nodeMs.toFixed(0)} ms)`);
  const startLines = (label: string, f: Figures, firstLabel: string) => {
    const m = median(f.restarts);
    console.log(`  ${label}`);
    console.log(`    first start (${firstLabel})`.padEnd(64) + fmt(f.first.ms));
    console.log(
      `    warm restart, median of ${RESTARTS}`.padEnd(64) +
        `${fmt(m)}  (${(m / nodeMs).toFixed(0)}x node -e 0; aim <= 3 s: ${m <= 3000 ? "met" : "not met"})`,
    );
  };
  startLines("AGENT_RUNTIME=off", off, "embedded database initialised");
  startLines("AGENT_RUNTIME=on (and its /health)", on, "database initialised, both bundles built");
  console.log("resident memory (RSS)");
  console.log(`  bare PGlite reopened, default settings`.padEnd(64) + mib(pgliteRss));
  const memLines = (label: string, f: Figures) => {
    console.log(`  ${label}`);
    console.log(`    idle after the first start`.padEnd(64) + mib(f.firstIdleRss));
    console.log(
      `    idle after a warm restart`.padEnd(64) +
        `${mib(f.idleRss)}  (${(f.idleRss / pgliteRss).toFixed(2)}x bare PGlite; aim < 300 MB: ${f.idleRss < 300e6 ? "met" : "not met"})`,
    );
    console.log(`    after 1,000 mixed requests`.padEnd(64) + mib(f.busyRss));
  };
  memLines("AGENT_RUNTIME=off", off);
  memLines("AGENT_RUNTIME=on (the first start built both bundles)", on);
} finally {
  rmSync(offDir, { recursive: true, force: true });
  rmSync(onDir, { recursive: true, force: true });
}
