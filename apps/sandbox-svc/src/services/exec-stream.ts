import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { ExecProcess } from "../driver/types.ts";
import { takeCommandSlot } from "./command-slots.ts";
import type { SandboxDeps } from "./context.ts";
import { auditCommand, checkCommand, requireRunning } from "./exec.ts";
import { streamClosed, streamOpened } from "./lifecycle.ts";
import type { SandboxRow } from "./mapping.ts";
import { enforce, execContext } from "./policy.ts";
import { getSandboxRow, touchActivity } from "./sandboxes.ts";

export interface ExecStreamRequest {
  argv: string[];
  tty: boolean;
  cols: number;
  rows: number;
}

/**
 * Starts the process of an interactive exec: the sandbox must run and the exec policy allow the
 * command. `aborted` is asked before the process starts and after: a process whose client went
 * away meanwhile is killed (it would never be reaped) and undefined is returned.
 */
export async function startExecStream(
  deps: SandboxDeps,
  caller: Caller,
  {
    projectId,
    sandboxId,
    request,
    aborted,
  }: { projectId: string; sandboxId: string; request: ExecStreamRequest; aborted: () => boolean },
): Promise<{ row: SandboxRow; proc: ExecProcess } | undefined> {
  const row = await getSandboxRow(deps, projectId, sandboxId);
  requireRunning(row);
  const { argv, tty } = request;
  if (argv.length === 0 || argv[0] === "") {
    throw new ProblemError("validation-failed", {
      detail: "The command is empty",
      errors: [{ pointer: "/query/command", message: "at least one command argument is required" }],
    });
  }
  checkCommand(argv, "/query/command");
  await enforce(deps, caller, "sandbox:exec", row, execContext(argv, tty), `Exec in sandbox ${sandboxId}`);
  if (aborted()) return undefined;
  // The slot is the process's: given back when it has ended, however the stream went.
  const release = takeCommandSlot(deps, sandboxId);
  let proc: ExecProcess;
  try {
    proc = await deps.driver.exec(sandboxId, request);
  } catch (err) {
    release();
    throw err;
  }
  proc.exited.then(release, release);
  if (aborted()) {
    proc.kill("SIGKILL");
    return undefined;
  }
  await touchActivity(deps, sandboxId);
  return { row, proc };
}

/**
 * Accounts for a stream while it is served: it keeps the sandbox from the idle stop, and when it
 * ends the sandbox counts as active and the command (never its output) is audited.
 */
export async function trackExecStream(
  deps: SandboxDeps,
  caller: Caller,
  {
    sandbox: row,
    argv,
    serve,
  }: { sandbox: SandboxRow; argv: string[]; serve: () => Promise<{ exitCode: number; closedByClient: boolean }> },
): Promise<void> {
  const started = performance.now();
  streamOpened(row.id);
  let end: { exitCode: number; closedByClient: boolean };
  try {
    end = await serve();
  } finally {
    streamClosed(row.id);
  }
  await touchActivity(deps, row.id).catch(() => {});
  // A terminal closed by its user (a tab left, Ctrl-D in the client) ends the process with a kill:
  // the session ended as asked, so it is no error, and the record says who ended it.
  await auditCommand(deps, caller, row, "sandbox.exec_stream", {
    command: argv,
    exitCode: end.exitCode,
    durationMs: Math.round(performance.now() - started),
    ...(end.closedByClient ? { endedBy: "client" as const } : {}),
  });
}
