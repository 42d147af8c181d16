import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runBuildChild, underBuildLock } from "@agentplane/service-kit/build-child";

const APP_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The web UI's sources (Vite root) and what they import from the runtime's own tree. */
export const WEB_ROOT = join(APP_ROOT, "web");
export const WEB_DIST = join(WEB_ROOT, "dist");
const SOURCES = [
  join(WEB_ROOT, "index.html"),
  join(WEB_ROOT, "src"),
  join(APP_ROOT, "client"),
  join(APP_ROOT, "src/webhooks/template.ts"),
];
const STAMP = ".source-hash";
const BUILD_SCRIPT = join(APP_ROOT, "scripts/build-web.ts");
const LOCK = join(WEB_ROOT, ".build-lock");

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .flatMap((e) => filesUnder(join(path, e.name)))
    .sort();
}

/** A hash of the sources (not their times: a fresh clone or a checkout rewrites every mtime). */
export function webSourceHash(): string {
  const hash = createHash("sha256");
  for (const file of SOURCES.flatMap(filesUnder))
    hash.update(relative(APP_ROOT, file)).update("\0").update(readFileSync(file));
  return hash.digest("hex");
}

export function webAssetsFresh(): boolean {
  const stamp = join(WEB_DIST, STAMP);
  return (
    existsSync(join(WEB_DIST, "index.html")) && existsSync(stamp) && readFileSync(stamp, "utf8") === webSourceHash()
  );
}

export interface BuildLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * Builds the web UI with Vite, in this process, into `web/dist` when it is missing or its sources
 * changed since the last build (see docs/decisions: built at start, not committed). The build goes
 * to a temporary folder first so a runtime serving the old one never sees half a build. Returns
 * false when it cannot build (Vite absent in a production install that skipped the build).
 * `scripts/build-web.ts` runs it; a server calls `ensureWebAssets`, which runs that script.
 */
export async function buildWebAssets(logger?: BuildLog): Promise<boolean> {
  if (webAssetsFresh()) return true;
  const hash = webSourceHash();
  const temp = `${WEB_DIST}.tmp-${process.pid}-${Date.now()}`;
  const started = Date.now();
  try {
    const vite = await import("vite");
    await vite.build({
      configFile: false,
      root: WEB_ROOT,
      // Relative asset URLs: the same build works at `/` and behind the gateway at `/agent/`.
      base: "./",
      logLevel: "warn",
      build: { outDir: temp, emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
    });
    writeFileSync(join(temp, STAMP), hash);
    rmSync(WEB_DIST, { recursive: true, force: true });
    renameSync(temp, WEB_DIST);
    logger?.info({ ms: Date.now() - started }, "web UI built");
    return true;
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    logger?.warn({ err: (err as Error).message }, "the web UI could not be built");
    return false;
  }
}

/** Runs `scripts/build-web.ts` as a build child; its lines go to `logger`, the last 20 kept. */
async function buildInChild(logger?: BuildLog): Promise<{ ok: boolean; output: string[] }> {
  const output: string[] = [];
  const exit = await runBuildChild(BUILD_SCRIPT, APP_ROOT, (text, stream) => {
    output.push(text);
    if (output.length > 20) output.shift();
    logger?.[stream === "stdout" ? "info" : "warn"]({ build: "web UI" }, text);
  });
  if (exit.error) return { ok: false, output: [...output, exit.error.message] };
  return { ok: exit.code === 0, output };
}

/**
 * The web UI built and current in `web/dist`, by a child process running Vite when it is missing
 * or stale (its heap goes with it instead of staying with the server). Returns false when it could
 * not build: the runtime then serves what is there, or a page saying the UI is not built.
 */
export async function ensureWebAssets(logger?: BuildLog): Promise<boolean> {
  if (webAssetsFresh()) return true;
  const started = Date.now();
  logger?.info({}, "building the web UI for its current sources");
  const built = await underBuildLock(LOCK, webAssetsFresh, async () => {
    const { ok, output } = await buildInChild(logger);
    if (ok && webAssetsFresh()) {
      logger?.info({ ms: Date.now() - started }, `web UI ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return true;
    }
    logger?.warn({ err: output.slice(-5).join("\n") }, "the web UI could not be built; serving what is there");
    return false;
  });
  // Not run: another process built the current sources meanwhile.
  return built ?? true;
}
