import { randomBytes } from "node:crypto";
import { newId } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { ExecProcess } from "../driver/types.ts";
import { DEFAULT_OUTPUT_CAP, type RunCommandResult } from "../exec/run-command.ts";
import type { SandboxDeps } from "./context.ts";

/**
 * One output stream of a running command, kept in bounded memory and at a bounded cost per chunk
 * however much it writes: its first bytes (the answer's, plus room for the end marker), its last
 * few (where the marker shows), and how many there were.
 */
interface Captured {
  head: Buffer[];
  headSize: number;
  total: number;
  tail: Buffer;
  /** Once its marker was seen: the output before it, capped, and whether it was cut. */
  body?: { text: Buffer; truncated: boolean };
}

/** How much of a stream's end is looked at for the marker (its line is under 64 bytes). */
const TAIL_BYTES = 512;

function captured(): Captured {
  return { head: [], headSize: 0, total: 0, tail: Buffer.alloc(0) };
}

function outputOf(s: Captured): { text: string; truncated: boolean } {
  const body = s.body ?? {
    text: Buffer.concat(s.head).subarray(0, DEFAULT_OUTPUT_CAP),
    truncated: s.total > DEFAULT_OUTPUT_CAP,
  };
  return { text: body.text.toString("utf8"), truncated: body.truncated };
}

interface Pending {
  marker: string;
  stdout: Captured;
  stderr: Captured;
  done: { stdout?: number; stderr?: boolean };
  finish: () => void;
  /** The shell's own exit status, when the command ended the shell (`exit 5`) before its marker. */
  shellExit?: number;
}

export interface ShellSession {
  id: string;
  projectId: string;
  sandboxId: string;
  createdAt: Date;
  lastActivityAt: Date;
  proc: ExecProcess;
  /** Commands of one session run one after another. */
  queue: Promise<unknown>;
  /** Commands asked for that have not had their turn yet. */
  waiting: number;
  pending?: Pending;
  closed: boolean;
}

const DEFAULT_SESSION_IDLE_MS = 10 * 60 * 1000;

/**
 * Open sessions one sandbox may have at once. Each is a shell and its pipes held by the service
 * for as long as the session lives (up to the idle timeout after its last command), so without a
 * bound one tenant could open them until the service runs out of processes or file descriptors.
 */
export const MAX_SESSIONS_PER_SANDBOX = 32;

/** Commands that may wait for their turn in one session (each is a request held open). */
export const MAX_WAITING_COMMANDS = 16;

/**
 * Persistent shells: one `sh` per session inside the sandbox. Each command is written to its stdin
 * followed by a line that prints a random end marker with the exit status on stdout (and the
 * marker on stderr), so working directory and exported variables carry over between commands.
 */
export class ShellSessions {
  private readonly sessions = new Map<string, ShellSession>();
  /**
   * Why recent sessions ended (the newest 1,000): asked for again, an ended session answers 410
   * Gone with its reason rather than 404, so a client can tell a timeout from a typo.
   */
  private readonly ended = new Map<string, { projectId: string; reason: string }>();
  /** Sessions being opened, per sandbox (their shell not started yet). */
  private readonly opening = new Map<string, number>();
  private readonly deps: SandboxDeps;
  readonly idleMs: number;

  constructor(deps: SandboxDeps) {
    this.deps = deps;
    this.idleMs = deps.config.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  }

  async open(projectId: string, sandboxId: string): Promise<ShellSession> {
    const held = this.count(sandboxId) + (this.opening.get(sandboxId) ?? 0);
    if (held >= MAX_SESSIONS_PER_SANDBOX) {
      throw new ProblemError("limit-exceeded", {
        detail: `Sandbox ${sandboxId} already has ${MAX_SESSIONS_PER_SANDBOX} open shell sessions, its limit. Close one (DELETE /v1/projects/${projectId}/shell-sessions/{sessionId}) or let one expire.`,
        extensions: { kind: "shell-sessions", limit: MAX_SESSIONS_PER_SANDBOX },
      });
    }
    // Sessions still being opened count too: a burst of opens cannot overshoot the limit.
    this.opening.set(sandboxId, (this.opening.get(sandboxId) ?? 0) + 1);
    let proc: ExecProcess;
    try {
      proc = await this.deps.driver.exec(sandboxId, { argv: ["/bin/sh"] });
    } finally {
      const left = (this.opening.get(sandboxId) ?? 1) - 1;
      if (left > 0) this.opening.set(sandboxId, left);
      else this.opening.delete(sandboxId);
    }
    const now = new Date();
    const session: ShellSession = {
      id: newId("shellSession"),
      projectId,
      sandboxId,
      createdAt: now,
      lastActivityAt: now,
      proc,
      queue: Promise.resolve(),
      waiting: 0,
      closed: false,
    };
    proc.stdout.on("data", (chunk: Buffer) => this.onOutput(session, "stdout", chunk));
    proc.stderr.on("data", (chunk: Buffer) => this.onOutput(session, "stderr", chunk));
    void proc.exited.then((exit) => {
      if (session.pending) session.pending.shellExit = exit.exitCode;
      if (!session.closed) this.remember(session, "its shell exited");
      session.closed = true;
      this.sessions.delete(session.id);
      session.pending?.finish();
    });
    this.sessions.set(session.id, session);
    return session;
  }

  get(projectId: string, sessionId: string): ShellSession {
    const session = this.sessions.get(sessionId);
    if (!session || session.projectId !== projectId) {
      const ended = this.ended.get(sessionId);
      if (ended && ended.projectId === projectId) {
        throw new ProblemError("gone", { detail: `Shell session ${sessionId} has ended: ${ended.reason}` });
      }
      throw new ProblemError("not-found", { detail: `Shell session ${sessionId} was not found` });
    }
    return session;
  }

  list(projectId: string): ShellSession[] {
    return [...this.sessions.values()].filter((s) => s.projectId === projectId);
  }

  private count(sandboxId: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.sandboxId === sandboxId) n++;
    return n;
  }

  /** Sandboxes that have an open session count as active (no idle stop). */
  hasSessions(sandboxId: string): boolean {
    return [...this.sessions.values()].some((s) => s.sandboxId === sandboxId);
  }

  /**
   * Ends a session. With a reason (idle, a command's timeout) the service ended it, and a later
   * request answers 410 with that reason; without one its client closed it (DELETE), and the
   * session is simply gone: 404, like any id that does not exist.
   */
  close(session: ShellSession, reason?: string): void {
    if (!session.closed && reason) this.remember(session, reason);
    session.closed = true;
    this.sessions.delete(session.id);
    session.proc.kill("SIGKILL");
  }

  closeIdle(now = Date.now()): void {
    for (const session of this.sessions.values()) {
      // A command running (it may take longer than the idle timeout) or waiting is no idleness.
      if (session.pending || session.waiting > 0) continue;
      if (now - session.lastActivityAt.getTime() > this.idleMs) {
        this.close(session, `it was idle for more than ${Math.round(this.idleMs / 1000)} s`);
      }
    }
  }

  closeAll(): void {
    for (const session of this.sessions.values()) this.close(session);
  }

  /**
   * Runs a command once the session's earlier ones are done. Its timeout counts from when it was
   * asked for: one that spends it all waiting never runs, and its request is answered then (409),
   * not whenever the commands before it end.
   */
  run(session: ShellSession, command: string, timeoutMs: number): Promise<RunCommandResult> {
    if (session.waiting >= MAX_WAITING_COMMANDS) {
      throw new ProblemError("conflict", {
        detail: `Shell session ${session.id} already has ${MAX_WAITING_COMMANDS} commands waiting for their turn; wait for them to end`,
      });
    }
    const asked = performance.now();
    session.waiting++;
    let waiting = true;
    let timer: NodeJS.Timeout | undefined;
    const stopWaiting = () => {
      if (!waiting) return false;
      waiting = false;
      session.waiting--;
      return true;
    };
    const turn = session.queue.then(() => {
      clearTimeout(timer);
      if (!stopWaiting()) return undefined;
      return this.runNow(session, command, Math.max(1, Math.round(timeoutMs - (performance.now() - asked))));
    });
    session.queue = turn.catch(() => {});
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (!stopWaiting()) return;
        reject(
          new ProblemError("conflict", {
            detail: `Shell session ${session.id} was busy with earlier commands for the whole ${timeoutMs} ms timeout; the command did not run`,
          }),
        );
      }, timeoutMs);
    });
    return Promise.race([turn as Promise<RunCommandResult>, gaveUp]);
  }

  private runNow(session: ShellSession, command: string, timeoutMs: number): Promise<RunCommandResult> {
    if (session.closed) {
      const reason = this.ended.get(session.id)?.reason;
      throw new ProblemError("gone", { detail: `Shell session ${session.id} has ended${reason ? `: ${reason}` : ""}` });
    }
    session.lastActivityAt = new Date();
    const started = performance.now();
    const marker = `__agentplane_${randomBytes(12).toString("hex")}__`;
    return new Promise<RunCommandResult>((resolve) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        // The shell is in an unknown state after a kill; the session ends with it.
        this.close(session, `a command ran past its ${timeoutMs} ms timeout and the shell was killed`);
      }, timeoutMs);
      const pending: Pending = {
        marker,
        stdout: captured(),
        stderr: captured(),
        done: {},
        finish: () => {
          clearTimeout(timer);
          session.pending = undefined;
          session.lastActivityAt = new Date();
          const stdout = outputOf(pending.stdout);
          const stderr = outputOf(pending.stderr);
          resolve({
            exitCode: pending.done.stdout ?? (timedOut ? 137 : (pending.shellExit ?? 1)),
            stdout: stdout.text,
            stderr: stderr.text,
            stdoutTruncated: stdout.truncated,
            stderrTruncated: stderr.truncated,
            timedOut,
            durationMs: Math.round(performance.now() - started),
          });
        },
      };
      session.pending = pending;
      // The command reads no stdin of ours (it would eat the next command); a brace group keeps `cd`/`export` effects.
      session.proc.stdin.write(
        `{\n${command}\n} </dev/null\n__ap_rc=$?; printf '\\n${marker} %d\\n' "$__ap_rc"; printf '\\n${marker}\\n' >&2\n`,
      );
    });
  }

  private remember(session: ShellSession, reason: string): void {
    if (this.ended.size >= 1000) this.ended.delete(this.ended.keys().next().value as string);
    this.ended.set(session.id, { projectId: session.projectId, reason });
  }

  /**
   * Takes a chunk of a running command's output. Its cost is that of the chunk (never of all the
   * output so far): a command writing without end must not take the service's thread with it.
   */
  private onOutput(session: ShellSession, stream: "stdout" | "stderr", chunk: Buffer): void {
    const pending = session.pending;
    if (!pending) return;
    const s = pending[stream];
    if (s.body) return;
    // The first bytes, up to the cap and room for the marker line (cut off once it is seen).
    const room = DEFAULT_OUTPUT_CAP + TAIL_BYTES - s.headSize;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      s.head.push(part);
      s.headSize += part.length;
    }
    s.total += chunk.length;
    s.tail =
      chunk.length >= TAIL_BYTES ? chunk.subarray(-TAIL_BYTES) : Buffer.concat([s.tail, chunk]).subarray(-TAIL_BYTES);
    const re =
      stream === "stdout" ? new RegExp(`\\n${pending.marker} (\\d+)\\n$`) : new RegExp(`\\n${pending.marker}\\n$`);
    const match = re.exec(s.tail.toString("latin1"));
    if (!match) return;
    const length = s.total - match[0].length;
    s.body = {
      text: Buffer.concat(s.head).subarray(0, Math.min(length, DEFAULT_OUTPUT_CAP)),
      truncated: length > DEFAULT_OUTPUT_CAP,
    };
    if (stream === "stdout") pending.done.stdout = Number(match[1]);
    else pending.done.stderr = true;
    if (pending.done.stdout !== undefined && pending.done.stderr) pending.finish();
  }
}
