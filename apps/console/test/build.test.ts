import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../../..");
const CONSOLE = join(REPO, "apps/console");

/**
 * Runs in a Node process of its own (as the platform does, outside the test runner, which has Vite
 * loaded for itself): records every module this process resolves, then ensures the build of the
 * copy named by argv[1]. Prints what it saw, or the error.
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
const { ensureConsoleBuild, buildIsCurrent, sourceHash } = await import(process.argv[1]);
const lines = [];
let error;
const dir = await ensureConsoleBuild((m) => lines.push(m)).catch((err) => { error = err.message; });
process.stdout.write(JSON.stringify({
  dir,
  error,
  current: buildIsCurrent(),
  hash: sourceHash(),
  vite: resolved.filter((url) => /[\\\\/]vite[\\\\/]/.test(url)),
  lines,
}));
`;

interface ProbeResult {
  dir?: string;
  error?: string;
  current: boolean;
  hash: string;
  vite: string[];
  lines: string[];
}

function probe(buildModule: string, env: Record<string, string> = {}): Promise<ProbeResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", PROBE, pathToFileURL(buildModule).href], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
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

describe("the console build at start", () => {
  let root: string;
  let app: string;

  beforeAll(() => {
    // A copy laid out as in the repository, its dependencies those of the real one.
    root = mkdtempSync(join(tmpdir(), "console-build-"));
    app = join(root, "apps/console");
    mkdirSync(app, { recursive: true });
    for (const path of ["build.ts", "vite.config.ts", "index.html", "package.json", "public", "src", "tsconfig.json"]) {
      cpSync(join(CONSOLE, path), join(app, path), { recursive: true });
    }
    cpSync(join(REPO, "tsconfig.base.json"), join(root, "tsconfig.base.json"));
    symlinkSync(join(CONSOLE, "node_modules"), join(app, "node_modules"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("rebuilds a stale build in a child process without loading Vite into the server", async () => {
    const dist = join(app, "dist");
    mkdirSync(dist, { recursive: true });
    writeFileSync(join(dist, "index.html"), "<p>an older build</p>");
    writeFileSync(join(dist, ".source-hash"), "the hash of older sources");

    // Started by a test runner: the build is a production build all the same.
    const result = await probe(join(app, "build.ts"), { NODE_ENV: "test" });

    expect(result.error).toBeUndefined();
    expect(result.dir).toBe(dist);
    expect(result.current).toBe(true);
    expect(readFileSync(join(dist, ".source-hash"), "utf8")).toBe(result.hash);
    expect(readFileSync(join(dist, "index.html"), "utf8")).toContain("<script");
    expect(result.vite).toEqual([]);
    expect(result.lines[0]).toBe("building the console (apps/console) for its current sources");
    expect(result.lines.at(-1)).toMatch(/^console ready in \d+\.\d s$/);
    // React's development JSX runtime (`jsxDEV`) is called only by a development build.
    const assets = join(dist, "assets");
    const development = readdirSync(assets).filter(
      (name) => name.endsWith(".js") && readFileSync(join(assets, name), "utf8").includes("jsxDEV"),
    );
    expect(development).toEqual([]);
  }, 120_000);

  it("fails clearly when the build fails", async () => {
    const page = join(app, "index.html");
    writeFileSync(
      page,
      readFileSync(page, "utf8").replace("</body>", '<script type="module" src="/src/missing.ts"></script></body>'),
    );
    const result = await probe(join(app, "build.ts"));
    expect(result.error).toMatch(/^the console build failed \(exit 1\): /);
    expect(result.error).toContain("missing.ts");
    expect(result.vite).toEqual([]);
  }, 120_000);
});
