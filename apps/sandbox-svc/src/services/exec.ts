import { ProblemError, unsafeTextReason } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { type RunCommandResult, runCommand } from "../exec/run-command.ts";
import { stage } from "../stages.ts";
import { takeCommandSlot } from "./command-slots.ts";
import { recordCommandEvent, type SandboxDeps } from "./context.ts";
import { type SandboxRow, toArgv } from "./mapping.ts";
import { enforce, execContext } from "./policy.ts";
import { touchActivity } from "./sandboxes.ts";

/**
 * What to do about a sandbox that cannot run commands now (a created sandbox is not started), in
 * words; the request that starts it goes in the problem's `start` member.
 */
function nextStep(row: SandboxRow): { detail: string; start?: { method: "POST"; path: string } } {
  const start = { method: "POST" as const, path: `/v1/projects/${row.project_id}/sandboxes/${row.id}/start` };
  if (row.state === "pending" || row.state === "stopped") return { detail: ": start it first", start };
  if (row.state === "failed") return { detail: ": its lastError says why; start it again", start };
  if (row.state === "starting") return { detail: " yet: try again in a moment" };
  return { detail: "" };
}

export function requireRunning(row: SandboxRow): void {
  if (row.state !== "running") {
    const next = nextStep(row);
    throw new ProblemError("invalid-transition", {
      detail: `Sandbox ${row.id} is ${row.state}, not running${next.detail}`,
      ...(next.start ? { extensions: { start: next.start } } : {}),
    });
  }
}

/**
 * Most bytes a command's arguments may take as JSON. The exec policy decides on the command, and
 * its decision request carries it twice (`argv` and `command`) within the 1 MiB every internal
 * request may have: a larger command would fail there, as if governance were down.
 */
export const MAX_COMMAND_JSON_BYTES = 256 * 1024;

/**
 * Refuses, with a 400 naming `pointer`, a command that cannot run as sent: an argument with a NUL
 * character (no process can be given one) or one larger than a policy decision can carry.
 */
export function checkCommand(argv: string[], pointer: string): void {
  const errors: { pointer: string; message: string }[] = [];
  argv.forEach((arg, i) => {
    const reason = unsafeTextReason(arg);
    if (reason) errors.push({ pointer: `${pointer}/${i}`, message: reason });
  });
  if (errors.length > 0) throw new ProblemError("validation-failed", { detail: "The command is not valid", errors });
  const size = Buffer.byteLength(JSON.stringify(argv));
  if (size > MAX_COMMAND_JSON_BYTES) {
    throw new ProblemError("validation-failed", {
      detail: `The command is too large: ${size} bytes as JSON, at most ${MAX_COMMAND_JSON_BYTES}`,
      errors: [{ pointer, message: `at most ${MAX_COMMAND_JSON_BYTES} bytes in all` }],
    });
  }
}

/**
 * Audits a command: what ran, how it ended, how long — never its output. The record is written to
 * the outbox on its own (one statement: no row changes with it) before the caller answers, and a
 * failure to write it fails the caller's request (the command has run; what cannot happen is that
 * it runs unrecorded without anyone hearing). The relay's round after it waits until the answer is out.
 */
export function auditCommand(
  deps: SandboxDeps,
  caller: Caller,
  row: SandboxRow,
  action: string,
  details: {
    command: string | string[];
    exitCode: number;
    durationMs: number;
    timedOut?: boolean;
    sessionId?: string;
    /** A stream its client closed: the process was killed on its behalf, no failure of its own. */
    endedBy?: "client";
  },
): Promise<void> {
  const command = typeof details.command === "string" ? details.command : details.command.join(" ");
  return recordCommandEvent(deps, caller, {
    action,
    projectId: row.project_id,
    orgId: row.org_id,
    targetType: "sandbox",
    targetId: row.id,
    outcome: details.exitCode === 0 || details.endedBy === "client" ? "success" : "error",
    details: { ...details, command: command.slice(0, 4096) },
  });
}

export async function execInSandbox(
  deps: SandboxDeps,
  caller: Caller,
  input: {
    /** The sandbox, loaded (and authorized on) by the handler. */
    sandbox: SandboxRow;
    command: string | string[];
    cwd?: string | undefined;
    env?: Record<string, string> | undefined;
    stdin?: string | undefined;
    timeoutMs: number;
  },
): Promise<RunCommandResult> {
  const row = input.sandbox;
  requireRunning(row);
  if (Array.isArray(input.command) && input.command.every((a) => a === "")) {
    throw new ProblemError("validation-failed", {
      detail: "The command is empty",
      errors: [{ pointer: "/body/command", message: "empty command" }],
    });
  }
  const argv = toArgv(input.command);
  checkCommand(argv, "/body/command");
  await enforce(deps, caller, "sandbox:exec", row, execContext(argv), `Exec in sandbox ${row.id}`);
  stage("exec: decided");
  const release = takeCommandSlot(deps, row.id);
  let result: RunCommandResult;
  // Written while the command runs, once it is spawned: a statement begun before would hold up
  // the spawn (on the embedded database it runs on this thread).
  let activity: Promise<void> | undefined;
  const touch = () => {
    activity ??= touchActivity(deps, row.id);
    return activity;
  };
  try {
    result = await runCommand(deps.driver, row.id, {
      argv,
      timeoutMs: input.timeoutMs,
      ...(input.cwd ? { cwd: input.cwd } : {}),
      ...(input.env ? { env: input.env } : {}),
      ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
      onSpawned: () => void touch().catch(() => {}),
    });
  } catch (err) {
    await touch().catch(() => {});
    throw err;
  } finally {
    release();
  }
  stage("exec: command done");
  await touch();
  stage("exec: activity written");
  await auditCommand(deps, caller, row, "sandbox.exec", {
    command: input.command,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    timedOut: result.timedOut,
  });
  stage("exec: audited");
  return result;
}
