import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../../..");
const APP = join(REPO, "apps/agent-runtime");

/**
 * Runs in a Node process of its own (as a server does, outside the test runner, which has Vite
 * loaded for itself): records every module this process resolves, then ensures the web UI of the
 * copy named by argv[2]. Prints what it saw.
 */
const PROBE = `import { registerHooks } from "node:module";
const resolved = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    resolved.push(result.url);
    return result;
  },
});
const { ensureWebAssets, webAssetsFresh, webSourceHash } = await import(process.argv[1]);
const lines = [];
const log = { info: (_, m) => lines.push(m), warn: (_, m) => lines.push("warn: " + m) };
const ok = await ensureWebAssets(log);
process.stdout.write(JSON.stringify({
  ok,
  fresh: webAssetsFresh(),
  hash: webSourceHash(),
  vite: resolved.filter((url) => /[\\\\/]vite[\\\\/]/.test(url)),
  lines,
}));
`;

interface ProbeResult {
  ok: boolean;
  fresh: boolean;
  hash: string;
  vite: string[];
  lines: string[];
}

function probe(buildModule: string, env: Record<string, string>): Promise<ProbeResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", PROBE, pathToFileURL(buildModule).href], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => {
      out += c;
    });
    child.stderr.on("data", (c) => {
      err += c;
    });
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0) fail(new Error(`probe exited ${code}: ${err}`));
      else done(JSON.parse(out) as ProbeResult);
    });
  });
}

/** Files of a build that carry React's development JSX runtime (`jsxDEV`), which only a development build calls. */
function developmentBuilds(assets: string): string[] {
  return readdirSync(assets).filter(
    (name) => name.endsWith(".js") && readFileSync(join(assets, name), "utf8").includes("jsxDEV"),
  );
}

/** A copy of the runtime's web UI, its sources and build script, laid out as in the repository. */
function copyOfTheApp(root: string): string {
  const app = join(root, "apps/agent-runtime");
  for (const path of [
    "web/index.html",
    "web/src",
    "web/tsconfig.json",
    "client",
    "scripts",
    "src/web",
    "src/webhooks/template.ts",
  ]) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    cpSync(join(APP, path), join(app, path), { recursive: true });
  }
  cpSync(join(REPO, "tsconfig.base.json"), join(root, "tsconfig.base.json"));
  symlinkSync(join(APP, "node_modules"), join(app, "node_modules"));
  return app;
}

describe("the web UI build at start", () => {
  let root: string;
  let app: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "runtime-web-build-"));
    app = copyOfTheApp(root);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("rebuilds a stale build in a child process, without loading Vite into the server, and passes on its lines", async () => {
    const dist = join(app, "web/dist");
    mkdirSync(dist, { recursive: true });
    writeFileSync(join(dist, "index.html"), "<p>an older build</p>");
    writeFileSync(join(dist, ".source-hash"), "the hash of older sources");
    // Started by a test runner: the build is a production build all the same.
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NODE_ENV: "test" };

    const result = await probe(join(app, "src/web/build.ts"), env);

    expect(result.ok).toBe(true);
    expect(result.fresh).toBe(true);
    expect(readFileSync(join(dist, ".source-hash"), "utf8")).toBe(result.hash);
    expect(readFileSync(join(dist, "index.html"), "utf8")).toContain("<script");
    expect(result.vite).toEqual([]);
    expect(result.lines[0]).toBe("building the web UI for its current sources");
    // The child's own report, then this process's.
    expect(result.lines.filter((line) => line.startsWith("web UI built"))).toHaveLength(1);
    expect(result.lines.at(-1)).toMatch(/^web UI ready in \d+\.\d s$/);
    expect(developmentBuilds(join(dist, "assets"))).toEqual([]);
  });

  it("is a no-op on a current build, and serves what is there when the build fails", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    const current = await probe(join(app, "src/web/build.ts"), env);
    expect(current).toMatchObject({ ok: true, fresh: true, lines: [] });

    // The page names a module that does not exist: the build fails, the previous build stays.
    const served = readFileSync(join(app, "web/dist/index.html"), "utf8");
    const page = join(app, "web/index.html");
    writeFileSync(
      page,
      readFileSync(page, "utf8").replace("</body>", '<script type="module" src="/src/missing.ts"></script></body>'),
    );
    const failed = await probe(join(app, "src/web/build.ts"), env);
    expect(failed.ok).toBe(false);
    expect(failed.vite).toEqual([]);
    expect(failed.lines.at(-1)).toBe("warn: the web UI could not be built; serving what is there");
    expect(readFileSync(join(app, "web/dist/index.html"), "utf8")).toBe(served);
  });
});
