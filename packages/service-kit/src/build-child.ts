import { spawn } from "node:child_process";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { createInterface } from "node:readline";

/**
 * The web bundles (the console, the runtime's web UI) are built at start by a child process
 * running Vite, so the heap a build grows (hundreds of MB) goes away with it instead of staying
 * with the server. This is what both servers share of that: the child's flags and environment,
 * running it, and one build at a time across processes. Node built-ins only: importing it pulls
 * in nothing else of this package.
 */

/**
 * The Node flags a build child takes from this process (its memory and module settings): not what
 * this process runs (`-e`, `--test`), a debugger port or a file watcher.
 */
export function buildChildNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
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
export function buildChildEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = { NODE_ENV: "production" };
  for (const name of ["PATH", "HOME"]) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

export interface BuildChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The child could not be started at all. */
  error?: Error;
}

/** Runs `node <flags> <script>` in `cwd` as a build child; each line it prints goes to `onLine`. */
export function runBuildChild(
  script: string,
  cwd: string,
  onLine: (text: string, stream: "stdout" | "stderr") => void,
): Promise<BuildChildExit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...buildChildNodeFlags(), script], {
      cwd,
      env: buildChildEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const each = (stream: "stdout" | "stderr") => (raw: string) => {
      const text = raw.trimEnd();
      if (text) onLine(text, stream);
    };
    createInterface({ input: child.stdout }).on("line", each("stdout"));
    createInterface({ input: child.stderr }).on("line", each("stderr"));
    child.on("error", (error) => resolve({ code: null, signal: null, error }));
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
}

/** A lock older than this was left by a process that died while building. */
const STALE_LOCK_MS = 120_000;

/**
 * One build at a time across processes (servers and test files starting together), by a lock
 * directory: the others wait for it and use its result. Runs `build` unless `isCurrent()` is true
 * by the time the lock is held (or while waiting for it); undefined when it did not run.
 */
export async function underBuildLock<T>(
  lockDir: string,
  isCurrent: () => boolean,
  build: () => Promise<T>,
): Promise<T | undefined> {
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      const age = Date.now() - (statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lockDir, { recursive: true, force: true });
      if (isCurrent()) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return isCurrent() ? undefined : await build();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
