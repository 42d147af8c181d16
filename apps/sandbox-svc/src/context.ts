import type { SandboxDeps } from "./services/context.ts";
import type { ShellSessions } from "./services/shell-sessions.ts";

/** What every route handler gets: the service verbs' dependencies plus the live shell sessions. */
export interface SandboxContext extends SandboxDeps {
  sessions: ShellSessions;
}
