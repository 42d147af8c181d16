import { spawn } from "node:child_process";
import { constants, mkdirSync } from "node:fs";
import { type FileHandle, open, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  bubblewrapArgs,
  isHiddenFile,
  ProtectedPathError,
  type ProtectedPaths,
  realPath,
  refusedRead,
  refusedWrite,
} from "./local-isolation.ts";
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

const NOTHING_PROTECTED: ProtectedPaths = { hidden: { files: [], dirs: [] }, readOnly: [], writable: [] };

export interface LocalShellOptions {
  /** Variables of the runtime's environment passed to commands besides the harmless ones. */
  passEnv?: readonly string[];
  /** The runtime's own files: the file tools refuse them, and bubblewrap hides them from commands. */
  protect?: ProtectedPaths;
  /** Run each command under bubblewrap (`bwrap`, found on PATH) with `protect` applied. */
  bubblewrap?: boolean;
}

/** Runs commands with `/bin/sh -c` in the workspace directory and confines file access to it. */
export class LocalShellBackend implements ShellBackend {
  readonly kind = "local";
  readonly root: string;
  readonly isolated: boolean;
  readonly #passEnv: readonly string[];
  readonly #protect: ProtectedPaths;

  constructor(root: string, options: LocalShellOptions = {}) {
    this.root = root;
    this.#passEnv = options.passEnv ?? [];
    this.#protect = options.protect ?? NOTHING_PROTECTED;
    this.isolated = options.bubblewrap ?? false;
    mkdirSync(root, { recursive: true });
  }

  /**
   * The command's environment. Under bubblewrap a HOME the command may not write (the all-in-one
   * container's user lives in the data dir, hidden from commands) becomes the workspace, so tools
   * that keep their files in HOME (git, npm, pip) still work.
   */
  #environment(): Record<string, string> {
    const env = commandEnvironment(process.env, this.root, this.#passEnv);
    if (this.isolated && env.HOME && refusedWrite(this.#protect, realPath(env.HOME))) env.HOME = this.root;
    return env;
  }

  exec(command: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult> {
    const started = performance.now();
    const [file, args] = this.isolated
      ? ["bwrap", [...bubblewrapArgs(this.root, this.#protect), "/bin/sh", "-c", command]]
      : ["/bin/sh", ["-c", command]];
    return new Promise((resolvePromise, reject) => {
      const child = spawn(file, args, {
        cwd: this.root,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
        env: this.#environment(),
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

  /** Refuses the runtime's own files by path, and once open by identity (a path swapped meanwhile). */
  #refuse(requested: string, reason: string | undefined): void {
    if (reason) throw new ProtectedPathError(`${requested} ${reason}`);
  }

  async #checkOpened(handle: FileHandle, requested: string): Promise<void> {
    if (isHiddenFile(this.#protect, await handle.stat())) {
      await handle.close();
      this.#refuse(requested, "is one of the runtime's own configuration or secret files");
    }
  }

  async readFile(path: string, maxBytes: number) {
    const file = confine(this.root, path);
    this.#refuse(path, refusedRead(this.#protect, file));
    const handle = await open(file, "r");
    await this.#checkOpened(handle, path);
    try {
      const data = await handle.readFile();
      const truncated = data.length > maxBytes;
      return { content: data.subarray(0, maxBytes).toString("utf8"), truncated, size: data.length };
    } finally {
      await handle.close();
    }
  }

  async writeFile(path: string, content: string, append: boolean) {
    const file = confine(this.root, path);
    this.#refuse(path, refusedWrite(this.#protect, file));
    mkdirSync(dirname(file), { recursive: true });
    // Checked again after the directories exist: none of them may have become a way out.
    confine(this.root, file);
    // Not truncated on open: what was opened is checked first.
    const handle = await open(file, append ? "a" : constants.O_WRONLY | constants.O_CREAT);
    await this.#checkOpened(handle, path);
    try {
      if (!append) await handle.truncate(0);
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
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
