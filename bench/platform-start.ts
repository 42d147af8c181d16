// The all-in-one platform's start and footprint: the first start (the embedded database initialised)
// and warm restarts to a healthy /health, its resident memory idle and after 1,000 mixed requests.
// Baselines measured in the same run: `node -e 0` for start, a bare PGlite.create reopening a data
// dir (its default settings) for memory. Aims: restart <= 3 s; idle RSS < 300 MB.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../apps/platform/src/main.ts", import.meta.url));
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
  output: () => string;
}

async function startPlatform(dataDir: string): Promise<Started> {
  const port = await freePort();
  const started = performance.now();
  // As `npm start` runs it (scripts/bootstrap.mjs).
  const child = spawn(process.execPath, ["--max-semi-space-size=2", "--liftoff-only", MAIN], {
    env: {
      ...process.env,
      AGENTPLANE_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      AGENT_RUNTIME: "off",
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
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the platform exited ${child.exitCode}:\n${output.slice(-2000)}`);
    const ok = await fetch(`${url}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, ms: performance.now() - started, url, output: () => output };
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

/** 1,000 requests across services: health, the OpenAPI document, the console, an unauthenticated API call. */
async function mixedRequests(url: string, n: number): Promise<void> {
  const paths = ["/health", "/v1/openapi.json", "/", "/v1/orgs", "/v1/auth/me", "/docs"];
  let i = 0;
  const worker = async () => {
    while (i < n) {
      const path = paths[i++ % paths.length] as string;
      await (await fetch(`${url}${path}`)).arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

const dataDir = mkdtempSync(join(tmpdir(), "bench-platform-"));
try {
  const nodeMs = await timedNode(["-e", "0"]);
  const pgliteRss = await barePglite();

  const first = await startPlatform(dataDir);
  await stop(first);
  const restarts: number[] = [];
  let idleRss = 0;
  let busyRss = 0;
  for (let r = 0; r < RESTARTS; r++) {
    const p = await startPlatform(dataDir);
    restarts.push(p.ms);
    if (r === RESTARTS - 1) {
      await new Promise((res) => setTimeout(res, 3000));
      idleRss = rssOf(p.child.pid as number);
      await mixedRequests(p.url, 1000);
      await new Promise((res) => setTimeout(res, 1000));
      busyRss = rssOf(p.child.pid as number);
    }
    await stop(p);
  }
  const sorted = [...restarts].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`start, wall time to a healthy /health (node -e 0 in the same run: ${nodeMs.toFixed(0)} ms)`);
  console.log(`  first start (embedded database initialised)  ${fmt(first.ms)}`);
  console.log(
    `  warm restart, median of ${RESTARTS}               ${fmt(median)}  (${(median / nodeMs).toFixed(0)}x node -e 0; aim <= 3 s: ${median <= 3000 ? "met" : "not met"})`,
  );
  console.log("resident memory (RSS)");
  console.log(`  bare PGlite reopened, default settings        ${(pgliteRss / MIB).toFixed(0)} MiB`);
  console.log(
    `  all-in-one idle                              ${(idleRss / MIB).toFixed(0)} MiB  (${(idleRss / pgliteRss).toFixed(2)}x bare PGlite; aim < 300 MB: ${idleRss < 300e6 ? "met" : "not met"})`,
  );
  console.log(`  all-in-one after 1,000 mixed requests        ${(busyRss / MIB).toFixed(0)} MiB`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
