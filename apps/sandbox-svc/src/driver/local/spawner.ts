import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Duplex, PassThrough } from "node:stream";
import type { ExecExit, ExecProcess } from "../types.ts";
import { groupLeft } from "./process-group.ts";

/**
 * Why a helper process: Node forks the whole service to spawn a child, and with PGlite in the
 * process (all-in-one, ~800 MB resident) one fork costs 20–30 ms, which dominated every exec.
 * A small long-lived Node helper forks instead (~3 ms). The service hands each child Unix sockets
 * to the helper (three per exec), which gives them to the child as fds 0–2, so output flows from
 * the child straight to the service with no relay in between. Each socket is named by the key it
 * sends first; the service keeps a few connected ahead, so a spawn is one message with no connect
 * to wait for. Plain JavaScript: it runs on any Node.
 */
const HELPER = `
const net = require("net"), { spawn } = require("child_process");
const sockets = new Map(), requests = new Map(), wanted = new Map();
function tryStart(id) {
  const request = requests.get(id);
  if (!request) return;
  const { argv, env, cwd, stdio, keys, user, input } = request;
  if (keys.some((k) => k && !sockets.has(k))) return;
  requests.delete(id);
  const mine = keys.map((k) => (k ? sockets.get(k) : undefined));
  for (const k of keys) if (k) { sockets.delete(k); wanted.delete(k); }
  const fds = stdio.map((s, i) => (s === "pipe" ? mine[i] : "ignore"));
  // Bytes the child reads at once (bwrap's options): a pipe of this helper's, written here, so
  // that the child does not wait for the service to hear it was spawned.
  if (input) {
    while (fds.length < input.fd) fds.push("ignore");
    fds[input.fd] = "pipe";
  }
  const own = mine.filter(Boolean);
  // Node's sockets are non-blocking, and the child shares the flag with our copy. libuv makes fds
  // 0-2 blocking for the child; a further fd would stay non-blocking, and a shell's read of it
  // (a sandbox waiting on fd 5 for its egress relay) would fail at once instead of waiting. Our
  // copy reads nothing more: spawn stops reading it in this same turn, then it is destroyed.
  mine.forEach((s, i) => { if (s && i > 2) s._handle.setBlocking(true); });
  let child;
  try {
    // libuv drops the supplementary groups, then sets the gid and uid, in the child before exec.
    const ids = user ? { uid: user.uid, gid: user.gid } : {};
    child = spawn(argv[0], argv.slice(1), { stdio: fds, env, cwd: cwd || undefined, detached: true, ...ids });
  } catch (err) {
    process.send({ type: "exit", id, code: 127, error: String(err) });
    for (const s of own) s.destroy();
    return;
  }
  // The child holds its own copies of the sockets; ours must go or EOF never reaches the service.
  for (const s of own) s.destroy();
  const feed = input ? child.stdio[input.fd] : null;
  if (feed) {
    feed.on("error", () => {});
    feed.end(Buffer.from(input.data, "base64"));
  }
  child.once("error", (err) => process.send({ type: "exit", id, code: 127, error: err.message }));
  child.once("spawn", () => process.send({ type: "spawned", id, pid: child.pid }));
  child.once("exit", (code, signal) => process.send({ type: "exit", id, code, signal }));
}
const server = net.createServer({ pauseOnConnect: true, allowHalfOpen: true }, (socket) => {
  let key = "";
  const onReadable = () => {
    let byte;
    while ((byte = socket.read(1)) !== null) {
      if (byte[0] !== 10) { key += byte.toString("latin1"); if (key.length > 100) return socket.destroy(); continue; }
      socket.off("readable", onReadable);
      socket.pause();
      sockets.set(key, socket);
      // A socket the service gave up on before using it.
      socket.once("close", () => { if (sockets.get(key) === socket) sockets.delete(key); });
      const id = wanted.get(key);
      return id === undefined ? undefined : tryStart(id);
    }
  };
  socket.on("error", () => {});
  socket.on("readable", onReadable);
});
server.listen(process.env.SPAWNER_SOCKET, () => process.send({ type: "ready" }));
process.on("message", (m) => {
  if (m.type !== "spawn") return;
  requests.set(m.id, m);
  for (const k of m.keys) if (k) wanted.set(k, m.id);
  tryStart(m.id);
});
process.on("disconnect", () => process.exit(0));
`;

export type StdioSpec = ("pipe" | "ignore")[];

/**
 * The host user a child runs as (the service must be root): its supplementary groups dropped,
 * then its gid and uid set, between fork and exec, as `setpriv --reuid --regid --clear-groups`
 * would without the start of another program.
 */
export interface SpawnUser {
  uid: number;
  gid: number;
}

/**
 * Bytes a child reads on `fd` (an `ignore` entry of its stdio, or one past the last) from its
 * start: written by whoever spawns it, right after the fork, and ended.
 */
export interface SpawnInput {
  fd: number;
  data: Buffer;
}

/** A child started through the helper. */
export interface SpawnedChild {
  /** The service's end of each `pipe` entry of the child's stdio (undefined for `ignore`). */
  stdio: (Duplex | undefined)[];
  /** Signals the child's process group (once it runs, if asked before). */
  kill(signal?: NodeJS.Signals): void;
  /** The child's host pid once it runs; undefined when it never started. */
  readonly pid: Promise<number | undefined>;
  readonly exited: Promise<ExecExit>;
}

interface Pending {
  spawned: (pid: number) => void;
  /** The child is gone (or never started): release what the caller still holds for it. */
  gone: () => void;
  exited: (exit: ExecExit) => void;
}

function signalNumber(signal: string | null | undefined): number {
  const numbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
  return signal ? (numbers[signal] ?? 1) : 0;
}

/** A socket to the helper, named by the key it sent. */
interface Keyed {
  socket: Socket;
  key: string;
}

function connectKeyed(path: string, key: string): Promise<Keyed> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path }, () => socket.write(`${key}\n`, () => resolve({ socket, key })));
    socket.once("error", reject);
  });
}

/** Sockets kept connected ahead of spawns: a sandbox start takes seven (bwrap four, egress relay three), an exec three. */
const POOL_SIZE = 12;

/** Spawns children through the helper; `undefined` from a spawn means "do it yourself". */
export class Spawner {
  private socketPath = "";
  private helper: ChildProcess | undefined;
  private starting: Promise<ChildProcess | undefined> | undefined;
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private nextKey = 0;
  private closed = false;
  /** Connected sockets the helper holds its end of, none handed to a child yet. */
  private pool: Keyed[] = [];
  private refilling = false;

  private start(): Promise<ChildProcess | undefined> {
    if (this.helper?.connected) return Promise.resolve(this.helper);
    this.starting ??= new Promise<ChildProcess | undefined>((resolve) => {
      // A private (0700) directory: whoever can connect could claim another exec's output. Under
      // the system temp directory because Unix socket paths are limited to 107 bytes.
      if (!this.socketPath) this.socketPath = join(mkdtempSync(join(tmpdir(), "agentplane-spawner-")), "s");
      rmSync(this.socketPath, { force: true });
      const helper = spawn(process.execPath, ["-e", HELPER], {
        stdio: ["ignore", "ignore", "ignore", "ipc"],
        env: { SPAWNER_SOCKET: this.socketPath },
      });
      helper.on("message", (m: { type: string; id?: string; pid?: number; code?: number | null; signal?: string }) => {
        if (m.type === "ready") {
          this.helper = helper;
          resolve(helper);
          this.refill();
          return;
        }
        const p = this.pending.get(m.id ?? "");
        if (!p) return;
        if (m.type === "spawned") p.spawned(m.pid as number);
        if (m.type === "exit") {
          this.pending.delete(m.id as string);
          p.gone();
          p.exited(m.signal ? { exitCode: 128 + signalNumber(m.signal), signal: m.signal } : { exitCode: m.code ?? 1 });
        }
      });
      helper.once("exit", () => {
        this.helper = undefined;
        this.starting = undefined;
        resolve(undefined);
        for (const { socket } of this.pool.splice(0)) socket.destroy();
        // Children the helper started keep running; their exit can no longer be observed.
        for (const [id, p] of this.pending) {
          this.pending.delete(id);
          p.gone();
          p.exited({ exitCode: 137 });
        }
      });
      helper.once("error", () => resolve(undefined));
    });
    return this.starting;
  }

  /**
   * Starts `argv` with one Unix socket for each `pipe` entry of `stdio` (fd 0, 1, 2, 3, …) and
   * /dev/null for each `ignore`, in a process group of its own. Undefined when the helper cannot.
   * Write to a socket only once the child runs (`onSpawned`, or after it said something): until
   * then the helper holds a copy of it, which may read and lose what arrives.
   */
  async spawnChild(
    argv: string[],
    env: Record<string, string>,
    options: {
      cwd?: string | undefined;
      stdio: StdioSpec;
      user?: SpawnUser | undefined;
      onSpawned?: (stdio: (Duplex | undefined)[]) => void;
      /** The child is gone (or never started): release what the caller still holds for it. */
      onGone?: (stdio: (Duplex | undefined)[]) => void;
      input?: SpawnInput | undefined;
    },
  ): Promise<SpawnedChild | undefined> {
    if (this.closed) return undefined;
    const helper = await this.start();
    if (!helper) return undefined;
    const id = String(++this.next);
    const stdio: (Socket | undefined)[] = [];
    const keys: (string | null)[] = options.stdio.map(() => null);
    try {
      await Promise.all(
        options.stdio.map(async (kind, i) => {
          if (kind !== "pipe") return;
          const keyed = this.take() ?? (await this.connect());
          stdio[i] = keyed.socket;
          keys[i] = keyed.key;
        }),
      );
    } catch {
      for (const s of stdio) s?.destroy();
      return undefined;
    } finally {
      this.refill();
    }
    let pid = 0;
    let killWith: NodeJS.Signals | undefined;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-pid, signal);
      } catch {
        // Already gone.
      }
    };
    let resolvePid: (pid: number | undefined) => void = () => {};
    const started = new Promise<number | undefined>((resolve) => {
      resolvePid = resolve;
    });
    let resolveExit: (exit: ExecExit) => void = () => {};
    const exited = new Promise<ExecExit>((resolve) => {
      resolveExit = resolve;
    });
    this.pending.set(id, {
      spawned: (p) => {
        pid = p;
        resolvePid(p);
        options.onSpawned?.(stdio);
        if (killWith) signalGroup(killWith);
      },
      gone: () => {
        resolvePid(undefined);
        options.onGone?.(stdio);
      },
      // Reaped by the helper already: any process of its group still there is one it started.
      exited: (exit) => resolveExit({ ...exit, descendantsLeft: groupLeft(pid) }),
    });
    const input = options.input && { fd: options.input.fd, data: options.input.data.toString("base64") };
    helper.send({
      type: "spawn",
      id,
      argv,
      env,
      cwd: options.cwd,
      stdio: options.stdio,
      keys,
      user: options.user,
      input,
    });
    const kill = (signal: NodeJS.Signals = "SIGKILL") => {
      if (pid) signalGroup(signal);
      else killWith = signal;
    };
    return { stdio, kill, exited, pid: started };
  }

  private take(): Keyed | undefined {
    for (let keyed = this.pool.pop(); keyed; keyed = this.pool.pop()) if (!keyed.socket.destroyed) return keyed;
    return undefined;
  }

  private async connect(): Promise<Keyed> {
    const keyed = await connectKeyed(this.socketPath, String(++this.nextKey));
    keyed.socket.on("error", () => {});
    return keyed;
  }

  /** Tops the pool of connected sockets up, off the path of the spawn that took from it. */
  private refill(): void {
    if (this.refilling || this.closed || !this.helper?.connected || this.pool.length >= POOL_SIZE) return;
    this.refilling = true;
    const helper = this.helper;
    void Promise.all(
      Array.from({ length: POOL_SIZE - this.pool.length }, () =>
        this.connect().then(
          (keyed) => {
            // Sockets to a helper that has gone meanwhile would reach no one.
            if (this.closed || this.helper !== helper) keyed.socket.destroy();
            else this.pool.push(keyed);
          },
          () => {},
        ),
      ),
    ).finally(() => {
      this.refilling = false;
    });
  }

  /** A piped child (stdin, stdout, stderr) as an exec runs it. */
  async spawn(argv: string[], env: Record<string, string>, cwd?: string): Promise<ExecProcess | undefined> {
    // Until the child holds its stdin, the helper's copy of the socket would read (and lose)
    // whatever the caller writes: hold the bytes here and let them through once it is spawned.
    const stdin = new PassThrough();
    stdin.on("error", () => {});
    const child = await this.spawnChild(argv, env, {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      onSpawned: ([socket]) => stdin.pipe(socket as Duplex),
      onGone: ([socket]) => {
        stdin.unpipe(socket);
        socket?.destroy();
      },
    });
    if (!child) return undefined;
    const [, stdout, stderr] = child.stdio as [Duplex, Duplex, Duplex];
    // Return without awaiting "spawned": the caller attaches its listeners in this same turn, as
    // with child_process.spawn, before the end of a short command's output can be emitted unseen.
    return { stdin, stdout, stderr, resize() {}, kill: child.kill, exited: child.exited };
  }

  /** Starts the helper now, so the first spawn does not wait for it. */
  warm(): void {
    if (!this.closed) void this.start();
  }

  close(): void {
    this.closed = true;
    for (const { socket } of this.pool.splice(0)) socket.destroy();
    this.helper?.kill();
    // A helper still starting is stopped once it is up.
    void this.starting?.then((helper) => helper?.kill());
    if (this.socketPath) rmSync(dirname(this.socketPath), { recursive: true, force: true });
  }
}
