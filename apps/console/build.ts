import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";

/**
 * The console is built from its sources when its build is missing or older than them (a hash of
 * every source file, kept beside the build), so `npm start` on a fresh clone serves the current
 * console without a separate step; an unchanged tree costs one hash of a few hundred kilobytes.
 */
export const CONSOLE_ROOT = import.meta.dirname;
export const CONSOLE_DIST = join(CONSOLE_ROOT, "dist");
const STAMP = ".source-hash";
const LOCK = join(CONSOLE_ROOT, ".build-lock");
/** A lock older than this was left by a process that died while building. */
const STALE_LOCK_MS = 120_000;
const INPUTS = ["src", "index.html", "vite.config.ts", "package.json", "public"];

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

/** The hash of everything the build is made from. */
export function sourceHash(): string {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of files(join(CONSOLE_ROOT, input))) {
      hash.update(relative(CONSOLE_ROOT, file)).update("\0").update(readFileSync(file));
    }
  }
  return hash.digest("hex");
}

export function buildIsCurrent(): boolean {
  const stamp = join(CONSOLE_DIST, STAMP);
  // A build shipped without its sources (a production image) is current by definition.
  if (!existsSync(join(CONSOLE_ROOT, "src"))) return existsSync(join(CONSOLE_DIST, "index.html"));
  return existsSync(stamp) && readFileSync(stamp, "utf8") === sourceHash();
}

/**
 * Builds into a directory of its own and moves it into place, so processes starting together
 * never serve a half-written build; whichever finishes last wins with identical files.
 */
export async function buildConsole(): Promise<string> {
  const hash = sourceHash();
  const outDir = join(CONSOLE_ROOT, `.dist-${process.pid}-${Date.now()}`);
  const { build } = await import("vite");
  await build({
    configFile: join(CONSOLE_ROOT, "vite.config.ts"),
    build: { outDir },
    logLevel: "warn",
  });
  writeFileSync(join(outDir, STAMP), hash);
  if (buildIsCurrent()) {
    // Another process built the same sources meanwhile (and may be serving them): keep its build.
    rmSync(outDir, { recursive: true, force: true });
    return CONSOLE_DIST;
  }
  rmSync(CONSOLE_DIST, { recursive: true, force: true });
  try {
    renameSync(outDir, CONSOLE_DIST);
  } catch (err) {
    // Another process moved its identical build into place first.
    rmSync(outDir, { recursive: true, force: true });
    if (!existsSync(join(CONSOLE_DIST, "index.html"))) throw err;
  }
  return CONSOLE_DIST;
}

/**
 * One build at a time across processes (test files starting platforms in parallel): the others
 * wait for it and use its result.
 */
async function underBuildLock(build: () => Promise<unknown>): Promise<void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      if (buildIsCurrent()) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (!buildIsCurrent()) await build();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * The Node flags a build child takes from this process (its memory and module settings): not what
 * this process runs (`-e`, `--test`), a debugger port or a file watcher.
 */
function childNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const withValue = new Set(["-e", "--eval", "-p", "--print", "--watch-path", "--inspect-port", "--debug-port"]);
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] as string;
    if (flag === "-r") {
      flags.push(flag, execArgv[++i] as string);
    } else if (withValue.has(flag)) {
      i++;
    } else if (!/^(-[ic]$|--(eval|print|input-type|interactive|check|test|watch|inspect|debug))/.test(flag)) {
      flags.push(flag);
    }
  }
  return flags;
}

/**
 * What a build child sees of the environment: enough to run Node and Vite, no secret. The build
 * is always a production build, whatever this process runs as (a test runner's `NODE_ENV=test`
 * would otherwise ship React's development build to every later start of the same sources).
 */
function buildChildEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = { NODE_ENV: "production" };
  for (const name of ["PATH", "HOME"]) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Vite runs in a process of its own: the heap a build grows (hundreds of MB) goes away with it
 * instead of staying with the server for its whole life. Each line it prints goes to `log`.
 */
function buildInChild(log: (message: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childNodeFlags(), join(CONSOLE_ROOT, "build.ts")], {
      cwd: CONSOLE_ROOT,
      env: buildChildEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const errors: string[] = [];
    const line = (raw: string, stream: "stdout" | "stderr") => {
      const text = raw.trimEnd();
      // The entry prints where it built to; this process says so itself.
      if (!text || text === CONSOLE_DIST) return;
      if (stream === "stderr" && errors.length < 40) errors.push(text);
      log(text);
    };
    createInterface({ input: child.stdout }).on("line", (text) => line(text, "stdout"));
    createInterface({ input: child.stderr }).on("line", (text) => line(text, "stderr"));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`the console build failed (${signal ?? `exit ${code}`}): ${errors.join("\n")}`));
    });
  });
}

/** The directory to serve the console from, built first (in a child process) when missing or stale. */
export async function ensureConsoleBuild(log: (message: string) => void = () => {}): Promise<string> {
  if (buildIsCurrent()) return CONSOLE_DIST;
  const started = Date.now();
  log("building the console (apps/console) for its current sources");
  await underBuildLock(() => buildInChild(log));
  log(`console ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return CONSOLE_DIST;
}

if (import.meta.main) {
  try {
    if (process.argv.includes("--force") || !buildIsCurrent()) await buildConsole();
    process.stdout.write(`${CONSOLE_DIST}\n`);
  } catch (err) {
    // The reason alone: the process starting the server shows it as its own error.
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
