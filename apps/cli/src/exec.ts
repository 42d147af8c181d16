// `sandboxes exec [-i] [-t] <sandbox> -- <cmd…>`: the exec WebSocket wired to this terminal. Raw
// mode only with -t on a terminal, restored on every way out; the size sent first and on every
// resize; piped stdin forwarded then half-closed; the remote exit code becomes ours.
import { type ExecStream, openExecStream, type WebSocketConstructor } from "@agentplane/sdk/exec";
import { WebSocket } from "ws";
import { assertTokenTransport, type Io, openSession, requestTimeoutMs, requireToken } from "./context.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import type { CommandDeps } from "./operations.ts";
import { resolveInProject, resolveProject, SANDBOXES } from "./scope.ts";

export interface ExecFlags {
  interactive?: boolean;
  tty?: boolean;
  project?: string;
  org?: string;
  url?: string;
}

/** Runs the command and resolves with the exit code to leave with. */
export async function runExec(
  deps: CommandDeps,
  sandboxId: string,
  argv: string[],
  flags: ExecFlags,
  endpoint: "exec" | "k8s-exec" | "k8s-attach" = "exec",
): Promise<number> {
  const { io } = deps;
  if (argv.length === 0 && endpoint !== "k8s-attach")
    throw new CliError("no command: put it after --, e.g. `agentplane sandboxes exec sbx_… -- ls -la`");
  const session = openSession(io, deps.store, flags.url);
  const token = requireToken(session);
  assertTokenTransport(io, session.url);
  const projectId = await resolveProject(io, deps.store, session, flags.project, flags.org);
  // A pod of the Kubernetes-compatible view is its sandbox: named by the sandbox's id, or found by its name.
  const target = await resolveInProject(io, deps.store, session, { project: projectId }, SANDBOXES, sandboxId);
  const tty = Boolean(flags.tty && io.stdin.isTTY && io.stdout.isTTY);
  if (flags.tty && !tty) io.stderr.write("warning: -t ignored: stdin or stdout is not a terminal\n");

  const stream = await openExecStream({
    baseUrl: session.url,
    token,
    projectId,
    sandboxId: target,
    command: argv,
    endpoint,
    tty,
    ...(tty ? { cols: io.stdout.columns, rows: io.stdout.rows } : {}),
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    timeoutMs: requestTimeoutMs(io),
  });
  return pump(io, stream, { tty, interactive: Boolean(flags.interactive) });
}

/** The exit code of a process SIGINT ended, as a shell reports it (128 + 2). */
const INTERRUPTED = 130;

async function pump(io: Io, stream: ExecStream, mode: { tty: boolean; interactive: boolean }): Promise<number> {
  const stdin = io.stdin;
  let interrupted = false;
  const restore: (() => void)[] = [];
  const cleanup = () => {
    for (const undo of restore.splice(0).reverse()) undo();
  };
  // Whatever ends the process (a crash included), the terminal is given back cooked.
  process.once("exit", cleanup);
  try {
    stream.onStdout((chunk) => io.stdout.write(chunk));
    stream.onStderr((chunk) => io.stderr.write(chunk));
    if (mode.tty) {
      stdin.setRawMode(true);
      restore.push(() => stdin.setRawMode(false));
      const onResize = () => stream.resize(io.stdout.columns, io.stdout.rows);
      io.stdout.on("resize", onResize);
      restore.push(() => io.stdout.off("resize", onResize));
      onResize();
    } else {
      // Without a terminal of ours, Ctrl-C stops the remote command by closing the stream (the
      // server kills what it runs when its client goes), then ends us the way SIGINT would; a
      // second Ctrl-C does not wait for the server to say goodbye.
      const onSigint = () => {
        if (interrupted) process.exit(INTERRUPTED);
        interrupted = true;
        stream.close();
      };
      process.on("SIGINT", onSigint);
      restore.push(() => process.off("SIGINT", onSigint));
    }
    if (mode.interactive || mode.tty) {
      const onData = (chunk: Buffer) => stream.write(chunk);
      const onEnd = () => stream.end();
      stdin.on("data", onData);
      stdin.once("end", onEnd);
      restore.push(() => {
        stdin.off("data", onData);
        stdin.off("end", onEnd);
        stdin.pause();
      });
      stdin.resume();
    } else {
      stream.end();
    }
    const exit = await stream.exited;
    return interrupted ? INTERRUPTED : exit.exitCode;
  } catch (error) {
    cleanup();
    if (interrupted) return INTERRUPTED;
    if ((error as Error).name === "ExecConnectionLost") {
      // The remote output may have stopped mid-line: the error starts on a line of its own.
      io.stderr.write("\n");
      throw new CliError((error as Error).message, EXIT.error);
    }
    throw error;
  } finally {
    cleanup();
    process.off("exit", cleanup);
  }
}
