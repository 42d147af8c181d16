import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Duplex, PassThrough, type Readable } from "node:stream";
import type { IPty } from "node-pty";
import type { ExecExit, ExecProcess } from "../types.ts";
import { parentPid } from "./namespaces.ts";
import { groupLeft } from "./process-group.ts";
import type { SpawnedChild, SpawnInput, SpawnUser, StdioSpec } from "./spawner.ts";

/**
 * Moves the shell into each cgroup given as arguments, then execs the real command, so the
 * command and everything it forks are counted from their first instruction.
 */
const JOIN_CGROUPS =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';

export function withCgroups(procsFiles: string[], argv: string[]): string[] {
  if (procsFiles.length === 0) return argv;
  return ["/bin/sh", "-c", JOIN_CGROUPS, "sh", String(procsFiles.length), ...procsFiles, ...argv];
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
  return signal ? (numbers[signal] ?? 1) : 0;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** The exit of a child leading its own process group, saying whether others of the group run on. */
function groupExit(pid: number | undefined, code: number | null, signal: NodeJS.Signals | null): ExecExit {
  const exit: ExecExit = signal ? { exitCode: 128 + signalNumber(signal), signal } : { exitCode: code ?? 1 };
  exit.descendantsLeft = groupLeft(pid);
  return exit;
}

/** A piped child in its own process group (so a timeout kills what it forked too). */
export function spawnPiped(argv: string[], env: Record<string, string>, cwd?: string): ExecProcess {
  const [file, ...args] = argv as [string, ...string[]];
  const child: ChildProcess = spawn(file, args, {
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
    ...(cwd ? { cwd } : {}),
  });
  const exited = new Promise<ExecExit>((resolve) => {
    child.once("error", () => resolve({ exitCode: 127 }));
    child.once("exit", (code, signal) => resolve(groupExit(child.pid, code, signal)));
  });
  // A closed stdin (the process exited first) must not crash the service.
  child.stdin?.on("error", () => {});
  return {
    stdin: child.stdin as NonNullable<ChildProcess["stdin"]>,
    stdout: child.stdout as NonNullable<ChildProcess["stdout"]>,
    stderr: child.stderr as NonNullable<ChildProcess["stderr"]>,
    resize() {},
    kill: (signal = "SIGKILL") => killGroup(child.pid, signal),
    exited,
  };
}

/** A child on a real pseudo-terminal; stdout carries the terminal output, stderr stays empty. */
export async function spawnTty(
  argv: string[],
  env: Record<string, string>,
  size: { cols: number; rows: number },
  cwd?: string,
): Promise<ExecProcess> {
  const pty = await import("node-pty");
  const [file, ...args] = argv as [string, ...string[]];
  const term: IPty = pty.spawn(file, args, {
    name: env.TERM ?? "xterm-256color",
    cols: size.cols,
    rows: size.rows,
    env,
    ...(cwd ? { cwd } : {}),
  });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stderr.end();
  const stdin = new PassThrough();
  stdin.on("data", (chunk: Buffer) => term.write(chunk.toString("utf8")));
  // EOF on a terminal is ^D, as a user typing it would send.
  stdin.on("end", () => term.write("\x04"));
  term.onData((data) => stdout.write(data));
  const exited = new Promise<ExecExit>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      stdout.end();
      resolve(signal ? { exitCode: 128 + signal, signal: String(signal) } : { exitCode });
    });
  });
  return {
    stdin,
    stdout,
    stderr,
    resize: (cols, rows) => {
      try {
        term.resize(cols, rows);
      } catch {
        // The terminal closed meanwhile.
      }
    },
    kill: (signal = "SIGKILL") => killGroup(term.pid, signal),
    exited,
  };
}

/**
 * A child of this process with `SpawnedChild`'s shape, in a process group of its own: what the
 * driver falls back to when the spawner helper cannot start.
 */
export function spawnDirect(
  argv: string[],
  env: Record<string, string>,
  options: { cwd?: string | undefined; stdio: StdioSpec; user?: SpawnUser | undefined; input?: SpawnInput | undefined },
): SpawnedChild {
  const [file, ...args] = argv as [string, ...string[]];
  const stdioWithInput: ("pipe" | "ignore")[] = [...options.stdio];
  const { input } = options;
  if (input) {
    for (let i = stdioWithInput.length; i < input.fd; i++) stdioWithInput.push("ignore");
    stdioWithInput[input.fd] = "pipe";
  }
  const child: ChildProcess = spawn(file, args, {
    env,
    stdio: stdioWithInput,
    detached: true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  const exited = new Promise<ExecExit>((resolve) => {
    child.once("error", () => resolve({ exitCode: 127 }));
    child.once("exit", (code, signal) => resolve(groupExit(child.pid, code, signal)));
  });
  const stdio = options.stdio.map((kind, i) => (kind === "pipe" ? (child.stdio[i] as Duplex) : undefined));
  for (const s of stdio) s?.on("error", () => {});
  const feed = input ? (child.stdio[input.fd] as Duplex | null) : null;
  if (feed && input) {
    feed.on("error", () => {});
    feed.end(input.data);
  }
  return { stdio, kill: (signal = "SIGKILL") => killGroup(child.pid, signal), exited, pid: Promise.resolve(child.pid) };
}

/** Resolves once the sandbox's first process says "ready" on `ready` (its mounts are done). */
export function readReady(ready: Readable, exited: Promise<ExecExit>): Promise<void> {
  return new Promise((resolve, reject) => {
    ready.once("data", () => {
      ready.resume();
      resolve();
    });
    void exited.then(({ exitCode }) => reject(new Error(`bwrap exited with code ${exitCode}`)));
  });
}

/** bwrap writes `{"child-pid": N, …}` to the info fd once the namespaces exist. */
export function readChildPid(info: Readable, exited: Promise<ExecExit>): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const match = /"child-pid":\s*(\d+)/.exec(text);
      if (match) {
        info.off("data", onData);
        info.resume();
        resolve(Number(match[1]));
      }
    };
    info.on("data", onData);
    void exited.then(({ exitCode }) => reject(new Error(`bwrap exited with code ${exitCode}`)));
  });
}

/** The executable `name` in the first of `dirs` that has it. */
export function find(name: string, dirs: string[]): string | undefined {
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Next directory.
    }
  }
  return undefined;
}

/**
 * Resolves once `pid` has exited (gone, or a zombie). The sandbox's pid 1 is bwrap's own child in a
 * session of its own: it dies of --die-with-parent's signal just after the bwrap we killed, not
 * with it, and a stop answers only once it has.
 */
export async function exited(pid: number, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pid > 0 && Date.now() < deadline) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return;
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The last 2,000 characters of what a process wrote, trimmed. */
export function stderrTail(chunks: Buffer[]): string {
  return Buffer.concat(chunks).toString("utf8").slice(-2000).trim();
}

/**
 * The pids of a process's children: from /proc/<pid>/task/<pid>/children (bwrap's child has one
 * thread), else by the parent pid of every process. None is an error: the caller moves them into
 * the sandbox's limits before they may run its command.
 */
export function childPids(pid: number): number[] {
  let pids: number[];
  try {
    pids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    pids = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((candidate) => {
        try {
          return parentPid(candidate) === pid;
        } catch {
          return false;
        }
      });
  }
  if (pids.length === 0) throw new Error(`process ${pid} has no children`);
  return pids;
}
