import type { RuntimeConfig } from "../config.ts";
import { settingsTool } from "../turns/settings-tool.ts";
import { SandboxShellBackend } from "./sandbox-backend.ts";
import { LocalShellBackend, type ShellBackend } from "./shell-backend.ts";
import { shellTools } from "./shell-tools.ts";
import { ToolRegistry } from "./types.ts";

export type { AgentTool, ToolContext, ToolOutcome } from "./types.ts";
export { ToolRegistry } from "./types.ts";

/** The local workspace, or the sandbox when AGENTPLANE_API_URL + AGENTPLANE_TOKEN are set. */
export function shellBackendOf(config: RuntimeConfig): ShellBackend {
  if (config.sandbox) return new SandboxShellBackend({ ...config.sandbox, root: config.workspaceRoot });
  return new LocalShellBackend(config.workspaceRoot);
}

/** The core tools every turn has: settings and the shell tools. */
export function coreTools(config: RuntimeConfig): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(settingsTool);
  for (const tool of shellTools(shellBackendOf(config))) registry.register(tool);
  return registry;
}
