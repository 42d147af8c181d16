import type { Logger } from "pino";
import { ConfigError, type RuntimeConfig } from "../config.ts";
import { settingsTool } from "../turns/settings-tool.ts";
import { bubblewrapWorks, runtimeProtectedPaths } from "./local-isolation.ts";
import { SandboxShellBackend } from "./sandbox-backend.ts";
import { LocalShellBackend, type ShellBackend } from "./shell-backend.ts";
import { shellTools } from "./shell-tools.ts";
import { SkillCatalog, skillTool } from "./skills.ts";
import { ToolRegistry } from "./types.ts";

export type { AgentTool, ToolContext, ToolOutcome } from "./types.ts";
export { ToolRegistry } from "./types.ts";

/**
 * The local workspace, or the sandbox when AGENTPLANE_API_URL + AGENTPLANE_TOKEN are set. Local
 * commands run under bubblewrap when it works here (SHELL_ISOLATION `auto`), must (`bubblewrap`:
 * the start stops without it) or never do (`off`); the file tools refuse the runtime's own files
 * either way.
 */
export function shellBackendOf(
  config: RuntimeConfig,
  logger?: Logger,
  launcherHidden: readonly string[] = [],
): ShellBackend {
  if (config.sandbox) return new SandboxShellBackend({ ...config.sandbox, root: config.workspaceRoot });
  const protect = runtimeProtectedPaths(config, launcherHidden);
  const mode = config.env.SHELL_ISOLATION;
  const bubblewrap = mode !== "off" && bubblewrapWorks();
  if (mode === "bubblewrap" && !bubblewrap) {
    throw new ConfigError(
      "SHELL_ISOLATION",
      "is bubblewrap, but bwrap is not installed or cannot create namespaces here",
    );
  }
  if (!bubblewrap) {
    logger?.warn(
      { variable: "SHELL_ISOLATION", mode },
      "local commands run without bubblewrap: they can read the runtime's .env, secret key and database, and its process environment in /proc, as its user (install bubblewrap, or use the sandbox switch)",
    );
  }
  return new LocalShellBackend(config.workspaceRoot, { passEnv: config.shellPassEnv, protect, bubblewrap });
}

export type { AgentPlugin, PluginApi, PluginReport } from "./plugins.ts";
export { loadPlugins } from "./plugins.ts";
export { SkillCatalog } from "./skills.ts";

/** The core tools every turn has: settings, the shell tools and the skill loader. */
export function coreTools(
  config: RuntimeConfig,
  logger: Logger,
  launcherHidden: readonly string[] = [],
): { registry: ToolRegistry; skills: SkillCatalog } {
  const registry = new ToolRegistry();
  const skills = new SkillCatalog(config.skillsDir, logger);
  registry.register(settingsTool);
  for (const tool of shellTools(shellBackendOf(config, logger, launcherHidden))) registry.register(tool);
  registry.register(skillTool(skills));
  return { registry, skills };
}
