import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { runBuildChild, underBuildLock } from "@agentplane/service-kit/build-child";

/**
 * The console is built from its sources when its build is missing or older than them (a hash of
 * every source file, kept beside the build), so `npm start` on a fresh clone serves the current
 * console without a separate step; an unchanged tree costs one hash of a few hundred kilobytes.
 */
export const CONSOLE_ROOT = import.meta.dirname;
export const CONSOLE_DIST = join(CONSOLE_ROOT, "dist");
const STAMP = ".source-hash";
const LOCK = join(CONSOLE_ROOT, ".build-lock");
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
 * Vite runs in a process of its own: the heap a build grows (hundreds of MB) goes away with it
 * instead of staying with the server for its whole life. Each line it prints goes to `log`.
 */
async function buildInChild(log: (message: string) => void): Promise<void> {
  const errors: string[] = [];
  const exit = await runBuildChild(join(CONSOLE_ROOT, "build.ts"), CONSOLE_ROOT, (text, stream) => {
    // The entry prints where it built to; this process says so itself.
    if (text === CONSOLE_DIST) return;
    if (stream === "stderr" && errors.length < 40) errors.push(text);
    log(text);
  });
  if (exit.error) throw exit.error;
  if (exit.code !== 0) {
    throw new Error(`the console build failed (${exit.signal ?? `exit ${exit.code}`}): ${errors.join("\n")}`);
  }
}

/** The directory to serve the console from, built first (in a child process) when missing or stale. */
export async function ensureConsoleBuild(log: (message: string) => void = () => {}): Promise<string> {
  if (buildIsCurrent()) return CONSOLE_DIST;
  const started = Date.now();
  log("building the console (apps/console) for its current sources");
  await underBuildLock(LOCK, buildIsCurrent, () => buildInChild(log));
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
