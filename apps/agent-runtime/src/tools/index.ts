import type { Logger } from "pino";
import type { RuntimeConfig } from "../config.ts";
import { settingsTool } from "../turns/settings-tool.ts";
import { SandboxShellBackend } from "./sandbox-backend.ts";
import { LocalShellBackend, type ShellBackend } from "./shell-backend.ts";
import { shellTools } from "./shell-tools.ts";
import { SkillCatalog, skillTool } from "./skills.ts";
import { ToolRegistry } from "./types.ts";

export type { AgentTool, ToolContext, ToolOutcome } from "./types.ts";
export { ToolRegistry } from "./types.ts";

/** The local workspace, or the sandbox when AGENTPLANE_API_URL + AGENTPLANE_TOKEN are set. */
export function shellBackendOf(config: RuntimeConfig): ShellBackend {
  if (config.sandbox) return new SandboxShellBackend({ ...config.sandbox, root: config.workspaceRoot });
  return new LocalShellBackend(config.workspaceRoot, { passEnv: config.shellPassEnv });
}

export type { AgentPlugin, PluginApi, PluginReport } from "./plugins.ts";
export { loadPlugins } from "./plugins.ts";
export { SkillCatalog } from "./skills.ts";

/** The core tools every turn has: settings, the shell tools and the skill loader. */
export function coreTools(config: RuntimeConfig, logger: Logger): { registry: ToolRegistry; skills: SkillCatalog } {
  const registry = new ToolRegistry();
  const skills = new SkillCatalog(config.skillsDir, logger);
  registry.register(settingsTool);
  for (const tool of shellTools(shellBackendOf(config))) registry.register(tool);
  registry.register(skillTool(skills));
  return { registry, skills };
}
