import type { Caller } from "@agentplane/service-kit";
import type { SandboxContext } from "../context.ts";
import type { RunCommandResult } from "../exec/run-command.ts";
import { auditCommand, requireRunning } from "./exec.ts";
import { toArgv } from "./mapping.ts";
import { enforce, execContext } from "./policy.ts";
import { getSandboxRow, touchActivity } from "./sandboxes.ts";
import type { ShellSession } from "./shell-sessions.ts";

/** A shell session as the API shows it: it expires after `idleMs` without a command. */
export function toShellSession(s: ShellSession, idleMs: number) {
  return {
    id: s.id,
    projectId: s.projectId,
    sandboxId: s.sandboxId,
    createdAt: s.createdAt.toISOString(),
    lastActivityAt: s.lastActivityAt.toISOString(),
    expiresAt: new Date(s.lastActivityAt.getTime() + idleMs).toISOString(),
  };
}

/** Opens a persistent shell in a running sandbox of the project. */
export async function openShellSession(
  ctx: SandboxContext,
  _caller: Caller,
  { projectId, sandboxId }: { projectId: string; sandboxId: string },
): Promise<ShellSession> {
  const row = await getSandboxRow(ctx, projectId, sandboxId);
  requireRunning(row);
  return ctx.sessions.open(projectId, row.id);
}

/**
 * Runs one command in a session: the sandbox must still run, the exec policy must allow it, the
 * sandbox counts as active, and the command (never its output) is audited.
 */
export async function runShellSessionCommand(
  ctx: SandboxContext,
  caller: Caller,
  input: { projectId: string; sessionId: string; command: string; timeoutMs: number },
): Promise<RunCommandResult> {
  const { projectId, sessionId } = input;
  const session = ctx.sessions.get(projectId, sessionId);
  const row = await getSandboxRow(ctx, projectId, session.sandboxId);
  requireRunning(row);
  await enforce(ctx, caller, "sandbox:exec", row, execContext(toArgv(input.command)), `Session command in ${row.id}`);
  const activity = touchActivity(ctx, row.id);
  const result = await ctx.sessions.run(session, input.command, input.timeoutMs);
  await activity;
  await auditCommand(ctx, caller, row, "sandbox.session_command", {
    command: input.command,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    timedOut: result.timedOut,
    sessionId,
  });
  return result;
}
