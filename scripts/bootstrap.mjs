#!/usr/bin/env node
// Runs under any Node >= 18. Provisions the pinned Node 24 and pnpm from the npm registry when the
// running Node is too old, installs dependencies when they are missing or stale, then runs a job.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const rootPkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const NODE_VERSION = readFileSync(join(root, ".node-version"), "utf8").trim();
const PNPM_VERSION = rootPkg.packageManager.replace(/^pnpm@/, "").split("+")[0];
// The sources need the Node of package.json `engines` (24: it runs .ts files as they are). This script
// itself needs only Node 18; under an older Node than the floor it runs the jobs on the pinned one.
const MIN_NODE_MAJOR = Number(/\d+/.exec(rootPkg.engines.node)?.[0] ?? "24");
const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
const toolchain = join(cacheHome, "agentplane", "toolchain");

/** Kept equal to the all-in-one image's ENTRYPOINT (infra/Dockerfile) and bench/platform-start.ts. */
const ALL_IN_ONE_FLAGS = ["--max-semi-space-size=2", "--liftoff-only"];

const JOBS = {
  // The all-in-one's V8 flags (docs/operations.md, "Memory of the all-in-one"; bench/platform-start.ts
  // measures them): a small young generation, and the embedded database's WebAssembly kept on its
  // baseline compiler (its optimizing tier-up held ~100 MB more, and ~450 MB at its peak).
  start: ["node", [...ALL_IN_ONE_FLAGS, "apps/platform/src/main.ts"]],
  // The all-in-one platform, restarted whenever a file it imports changes.
  dev: ["node", ["--watch", "apps/platform/src/main.ts"]],
  runtime: ["node", ["apps/agent-runtime/src/main.ts"]],
  tui: ["node", ["apps/agent-runtime/tui/main.ts"]],
  platform: ["node", [...ALL_IN_ONE_FLAGS, "apps/platform/src/main.ts"]],
  test: ["pnpm", ["exec", "vitest", "run"]],
  lint: ["pnpm", ["exec", "biome", "check", "."]],
  typecheck: ["node", ["scripts/typecheck.mjs"]],
  bench: ["node", ["bench/run.ts"]],
  pnpm: ["pnpm", []],
  node: ["node", []],
};

function say(message) {
  process.stderr.write(`[agentplane] ${message}\n`);
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...opts });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

function npmInstallInto(prefix, spec, env) {
  mkdirSync(prefix, { recursive: true });
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  // npm's own report ("added 1 package") goes to stderr with ours: stdout is the job's, which a
  // first `npm run -s cli -- … --json | jq` must read alone.
  const status = run(
    npm,
    ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", spec],
    { env: { ...process.env, ...env }, stdio: ["inherit", 2, 2] },
  );
  if (status !== 0) throw new Error(`npm install ${spec} failed (exit ${status})`);
}

function ensureNode() {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= MIN_NODE_MAJOR) return { bin: process.execPath, headers: undefined };
  const prefix = join(toolchain, `node-${NODE_VERSION}`);
  const bin = join(prefix, "node_modules", "node", "bin", "node");
  if (!existsSync(bin)) {
    say(
      `Node ${process.versions.node} is older than ${MIN_NODE_MAJOR}; provisioning Node ${NODE_VERSION} from the npm registry into ${prefix}`,
    );
    npmInstallInto(prefix, `node@${NODE_VERSION}`);
  }
  const platformPkg = join(prefix, "node_modules", "node", "node_modules", `node-${process.platform}-${process.arch}`);
  return { bin, headers: existsSync(join(platformPkg, "include", "node")) ? platformPkg : undefined };
}

function ensurePnpm() {
  const prefix = join(toolchain, `pnpm-${PNPM_VERSION}`);
  const cli = join(prefix, "node_modules", "pnpm", "bin", "pnpm.cjs");
  if (!existsSync(cli)) {
    say(`provisioning pnpm ${PNPM_VERSION} into ${prefix}`);
    npmInstallInto(prefix, `pnpm@${PNPM_VERSION}`);
  }
  return cli;
}

function manifestFiles() {
  const files = ["package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml"];
  for (const group of ["packages", "apps", "tests", "bench"]) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    if (existsSync(join(dir, "package.json"))) files.push(join(group, "package.json"));
    for (const entry of readdirSync(dir)) {
      const p = join(group, entry, "package.json");
      if (existsSync(join(root, p))) files.push(p);
    }
  }
  return files;
}

function installStamp(nodeBin) {
  const hash = createHash("sha256");
  hash.update(`${NODE_VERSION}|${PNPM_VERSION}|${nodeBin}\n`);
  for (const f of manifestFiles()) {
    const p = join(root, f);
    if (existsSync(p)) hash.update(`${f}\n`).update(readFileSync(p));
  }
  return hash.digest("hex");
}

function main() {
  const [job = "start", ...rest] = process.argv.slice(2);
  const spec = JOBS[job];
  if (!spec) {
    say(`unknown job "${job}"; one of: ${Object.keys(JOBS).join(", ")}`);
    process.exit(2);
  }
  const node = ensureNode();
  const pnpmCli = ensurePnpm();
  const binDir = join(toolchain, "bin");
  mkdirSync(binDir, { recursive: true });
  // A tiny shim so child processes (turbo, vitest, scripts) find the same node and pnpm.
  const shim = join(binDir, "pnpm");
  const shimBody = `#!/bin/sh\nexec "${node.bin}" "${pnpmCli}" "$@"\n`;
  if (!existsSync(shim) || readFileSync(shim, "utf8") !== shimBody) writeFileSync(shim, shimBody, { mode: 0o755 });
  const env = {
    ...process.env,
    PATH: [binDir, dirname(node.bin), process.env.PATH].join(process.platform === "win32" ? ";" : ":"),
    ...(node.headers ? { npm_config_nodedir: node.headers } : {}),
  };
  delete env.npm_config_prefix;

  const stampFile = join(root, "node_modules", ".agentplane-install-stamp");
  const stamp = installStamp(node.bin);
  const current = existsSync(stampFile) ? readFileSync(stampFile, "utf8") : "";
  if (current !== stamp) {
    const frozen = existsSync(join(root, "pnpm-lock.yaml")) && process.env.CI === "true";
    say(
      `installing dependencies with pnpm ${PNPM_VERSION}${frozen ? " (frozen lockfile)" : ""}; native addons build from source on first install`,
    );
    const status = run(node.bin, [pnpmCli, "install", ...(frozen ? ["--frozen-lockfile"] : [])], {
      env,
      stdio: ["inherit", 2, 2],
    });
    if (status !== 0) process.exit(status);
    writeFileSync(stampFile, installStamp(node.bin));
  }

  const [cmd, args] = spec;
  const bin = cmd === "node" ? node.bin : cmd === "pnpm" ? node.bin : cmd;
  const fullArgs = cmd === "pnpm" ? [pnpmCli, ...args, ...rest] : [...args, ...rest];
  // The job and its script only: the arguments after it may carry secrets (`npm run cli --
  // credentials create --secret …`) or whole documents, and stderr often ends up in a CI log.
  const script = rest[0] && !rest[0].startsWith("-") && /[./]/.test(rest[0]) ? ` ${rest[0]}` : "";
  say(`running ${job}${script} on Node ${node.bin === process.execPath ? process.versions.node : NODE_VERSION}`);
  // Not spawnSync: a blocked launcher cannot pass on a signal, and a SIGTERM (a service manager,
  // `kill`) would end it alone, leaving the job running. Ctrl-C reaches both from the terminal,
  // so the launcher only waits for the job to end.
  const child = spawn(bin, fullArgs, { stdio: "inherit", cwd: root, env });
  const forward = (signal) => () => child.kill(signal);
  const handlers = { SIGTERM: forward("SIGTERM"), SIGHUP: forward("SIGHUP"), SIGINT: () => {} };
  for (const [signal, handler] of Object.entries(handlers)) process.on(signal, handler);
  child.on("error", (error) => {
    throw error;
  });
  child.on("exit", (code, signal) => {
    for (const [name, handler] of Object.entries(handlers)) process.off(name, handler);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

main();
