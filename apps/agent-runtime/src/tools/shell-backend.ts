import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { appendFile, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { confine } from "./workspace.ts";

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

export interface FileEntry {
  name: string;
  type: "file" | "dir" | "link" | "other";
  size: number;
}

/** Where the shell tools run: on this host in the workspace, or in a sandbox of the control plane. */
export interface ShellBackend {
  readonly kind: "local" | "sandbox";
  readonly root: string;
  exec(command: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult>;
  readFile(path: string, maxBytes: number): Promise<{ content: string; truncated: boolean; size: number }>;
  writeFile(path: string, content: string, append: boolean): Promise<{ bytes: number }>;
  list(path: string): Promise<FileEntry[]>;
}

/** Bytes kept of each of stdout and stderr. */
export const OUTPUT_CAP_BYTES = 64 * 1024;

class Capped {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;
  push(chunk: Buffer): void {
    const room = OUTPUT_CAP_BYTES - this.#size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part !== chunk) this.truncated = true;
    this.#chunks.push(part);
    this.#size += part.length;
  }
  text(): string {
    return Buffer.concat(this.#chunks).toString("utf8");
  }
}

/** Variables a local command inherits from the runtime's environment: none of them is a secret. */
const PASSED_VARIABLES = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
  "HOSTNAME",
  "COLUMNS",
  "LINES",
]);

/**
 * The environment a local command runs with: the harmless variables above, `LC_*`, and the ones the
 * operator names (SHELL_PASS_ENV). Everything else the runtime holds (model keys, tokens) stays out.
 */
export function commandEnvironment(
  source: Record<string, string | undefined>,
  root: string,
  extra: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {};
  const extras = new Set(extra);
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (PASSED_VARIABLES.has(name) || name.startsWith("LC_") || extras.has(name)) env[name] = value;
  }
  env.HOME ??= root;
  env.PWD = root;
  return env;
}

/** Runs commands with `/bin/sh -c` in the workspace directory and confines file access to it. */
export class LocalShellBackend implements ShellBackend {
  readonly kind = "local";
  readonly root: string;
  readonly #passEnv: readonly string[];

  /** `passEnv`: variables of the runtime's environment passed to commands besides the harmless ones. */
  constructor(root: string, options: { passEnv?: readonly string[] } = {}) {
    this.root = root;
    this.#passEnv = options.passEnv ?? [];
    mkdirSync(root, { recursive: true });
  }

  exec(command: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult> {
    const started = performance.now();
    return new Promise((resolvePromise, reject) => {
      const child = spawn("/bin/sh", ["-c", command], {
        cwd: this.root,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
        env: commandEnvironment(process.env, this.root, this.#passEnv),
      });
      const stdout = new Capped();
      const stderr = new Capped();
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, options.timeoutMs);
      options.signal?.addEventListener("abort", killGroup, { once: true });
      child.stdout.on("data", (c: Buffer) => stdout.push(c));
      child.stderr.on("data", (c: Buffer) => stderr.push(c));
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        resolvePromise({
          exitCode: code ?? (signal ? 128 + 9 : -1),
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutTruncated: stdout.truncated,
          stderrTruncated: stderr.truncated,
          timedOut,
          durationMs: Math.round(performance.now() - started),
        });
      });
    });
  }

  async readFile(path: string, maxBytes: number) {
    const file = confine(this.root, path);
    const data = await readFile(file);
    const truncated = data.length > maxBytes;
    return { content: data.subarray(0, maxBytes).toString("utf8"), truncated, size: data.length };
  }

  async writeFile(path: string, content: string, append: boolean) {
    const file = confine(this.root, path);
    mkdirSync(dirname(file), { recursive: true });
    // Checked again after the directories exist: none of them may have become a way out.
    confine(this.root, file);
    if (append) await appendFile(file, content);
    else await writeFile(file, content);
    return { bytes: Buffer.byteLength(content) };
  }

  async list(path: string): Promise<FileEntry[]> {
    const dir = confine(this.root, path);
    const entries = await readdir(dir, { withFileTypes: true });
    const out: FileEntry[] = [];
    for (const e of entries.slice(0, 1000)) {
      const type = e.isSymbolicLink() ? "link" : e.isDirectory() ? "dir" : e.isFile() ? "file" : "other";
      const size = type === "file" ? (await stat(join(dir, e.name)).catch(() => ({ size: 0 }))).size : 0;
      out.push({ name: e.name, type, size });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }
}
