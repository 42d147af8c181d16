import { sandboxContracts } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { auditCommand, requireRunning } from "../../services/exec.ts";
import { toArgv } from "../../services/mapping.ts";
import { enforce, execContext } from "../../services/policy.ts";
import { getSandboxRow, touchActivity } from "../../services/sandboxes.ts";
import type { ShellSession } from "../../services/shell-sessions.ts";
import { actorFor, type RouteDeps } from "../helpers.ts";

function toSession(s: ShellSession, idleMs: number) {
  return {
    id: s.id,
    projectId: s.projectId,
    sandboxId: s.sandboxId,
    createdAt: s.createdAt.toISOString(),
    lastActivityAt: s.lastActivityAt.toISOString(),
    expiresAt: new Date(s.lastActivityAt.getTime() + idleMs).toISOString(),
  };
}

/** The shell-session operations: create, list, get, delete, run a command. */
export function registerShellSessions(app: ServiceApp, deps: RouteDeps): void {
  const idle = deps.sessions.idleMs;
  app.openapi(sandboxContracts.createShellSession, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:exec", projectId);
    const row = await getSandboxRow(deps, projectId, c.req.valid("json").sandboxId);
    requireRunning(row);
    const session = await deps.sessions.open(projectId, row.id);
    return c.json(toSession(session, idle), 201);
  });

  app.openapi(sandboxContracts.listShellSessions, async (c) => {
    const { projectId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId);
    return c.json({ items: deps.sessions.list(projectId).map((s) => toSession(s, idle)) }, 200);
  });

  app.openapi(sandboxContracts.getShellSession, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:read", projectId);
    return c.json(toSession(deps.sessions.get(projectId, sessionId), idle), 200);
  });

  app.openapi(sandboxContracts.deleteShellSession, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    await actorFor(deps, c, "sandboxes:exec", projectId);
    deps.sessions.close(deps.sessions.get(projectId, sessionId));
    return c.body(null, 204);
  });

  app.openapi(sandboxContracts.runShellSessionCommand, async (c) => {
    const { projectId, sessionId } = c.req.valid("param");
    const actor = await actorFor(deps, c, "sandboxes:exec", projectId);
    const session = deps.sessions.get(projectId, sessionId);
    const { command, timeoutMs } = c.req.valid("json");
    const row = await getSandboxRow(deps, projectId, session.sandboxId);
    requireRunning(row);
    await enforce(deps, actor, "sandbox:exec", row, execContext(toArgv(command)), `Session command in ${row.id}`);
    const activity = touchActivity(deps, row.id);
    const result = await deps.sessions.run(session, command, timeoutMs);
    await activity;
    await auditCommand(deps, actor, row, "sandbox.session_command", {
      command,
      exitCode: result.exitCode,
      durationMs: result.durationMs,
      timedOut: result.timedOut,
      sessionId,
    });
    return c.json(result, 200);
  });
}
