import type { Readable } from "node:stream";
import type { ExecExit, ExecOptions, SandboxDriver } from "../driver/types.ts";
import { stage } from "../stages.ts";

export const DEFAULT_OUTPUT_CAP = 1024 * 1024;
/**
 * What is kept of a step's standard error for its failure's message (which shows 500 characters):
 * the step runs the sandbox's own programs, which may write without end.
 */
export const MESSAGE_OUTPUT_CAP = 4096;

export interface RunCommandOptions extends Omit<ExecOptions, "tty" | "cols" | "rows"> {
  stdin?: string;
  timeoutMs: number;
  outputCap?: number;
  /** Called once the command's process is spawned (not when the spawn fails). */
  onSpawned?: () => void;
}

export interface RunCommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

/** Keeps the first `cap` bytes of a stream and drains the rest (so the process never blocks on a full pipe). */
export function capture(
  stream: Readable,
  cap: number,
): { done: Promise<void>; result(): { text: string; truncated: boolean } } {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  stream.on("data", (chunk: Buffer) => {
    if (size >= cap) {
      truncated = true;
      return;
    }
    const room = cap - size;
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room));
      size = cap;
      truncated = true;
    } else {
      chunks.push(chunk);
      size += chunk.length;
    }
  });
  const done = new Promise<void>((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
  return { done, result: () => ({ text: Buffer.concat(chunks).toString("utf8"), truncated }) };
}

/**
 * Waits for a command's output to end after it exited. The exit may be heard before the last of
 * its output arrives (they travel apart, and under load far apart): with nothing of the command
 * left running, the output ends for certain and is waited for (bounded, for a process that left
 * the group). A background child may keep the output open for as long as it runs: then only
 * `graceMs`, as when the driver cannot tell.
 */
export async function outputEnded(exit: ExecExit, ended: Promise<unknown>, graceMs: number): Promise<void> {
  const wait = exit.descendantsLeft === false ? OUTPUT_AFTER_EXIT_MS : graceMs;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, wait)))]);
  clearTimeout(timer);
}

/** How long the output of a command that left nothing running may come after its exit. */
const OUTPUT_AFTER_EXIT_MS = 5_000;

/** Runs one command to completion inside a sandbox: stdin in, capped output out, killed at the timeout. */
export async function runCommand(
  driver: SandboxDriver,
  sandboxId: string,
  options: RunCommandOptions,
): Promise<RunCommandResult> {
  const started = performance.now();
  const cap = options.outputCap ?? DEFAULT_OUTPUT_CAP;
  const proc = await driver.exec(sandboxId, {
    argv: options.argv,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  stage("exec: spawned");
  options.onSpawned?.();
  const out = capture(proc.stdout, cap);
  const err = capture(proc.stderr, cap);
  proc.stdin.end(options.stdin ?? "");
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, options.timeoutMs);
  const exit = await proc.exited;
  clearTimeout(timer);
  stage("exec: exited");
  await outputEnded(exit, Promise.all([out.done, err.done]), 100);
  proc.stdout.destroy();
  proc.stderr.destroy();
  const stdout = out.result();
  const stderr = err.result();
  return {
    exitCode: exit.exitCode,
    stdout: stdout.text,
    stderr: stderr.text,
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    timedOut,
    durationMs: Math.round(performance.now() - started),
  };
}
