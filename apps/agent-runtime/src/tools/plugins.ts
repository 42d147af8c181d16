import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "pino";
import { type AgentTool, TOOL_NAME, type ToolRegistry } from "./types.ts";

/**
 * What a plugin module gets: `registerTool` adds one tool the model can call. A plugin module
 * (a `.js`/`.mjs`/`.ts` file, or a folder with `index.js`/`index.mjs`/`index.ts`, under
 * AGENT_PLUGINS_DIR) default-exports either `(api) => void | Promise<void>` or
 * `{ name?, register(api) }`.
 *
 * ```js
 * export default {
 *   name: "weather",
 *   register(api) {
 *     api.registerTool({
 *       name: "get_weather",
 *       description: "Current weather for a city",
 *       inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *       handler: async ({ city }) => ({ content: `Sunny in ${city}`, isError: false }),
 *     });
 *   },
 * };
 * ```
 */
export interface PluginApi {
  registerTool(tool: AgentTool): void;
  logger: Logger;
}

export interface AgentPlugin {
  name?: string;
  register(api: PluginApi): void | Promise<void>;
}

export interface PluginReport {
  plugin: string;
  file: string;
  status: "loaded" | "failed";
  tools: string[];
  error?: string;
  /** Tools refused (duplicate or invalid name), with why. */
  skipped: Array<{ tool: string; reason: string }>;
}

const MODULE = /\.(m?js|ts)$/;

function pluginFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      const index = ["index.mjs", "index.js", "index.ts"].map((f) => join(path, f)).find((f) => existsSync(f));
      if (index) files.push(index);
    } else if (MODULE.test(entry) && !entry.endsWith(".d.ts")) {
      files.push(path);
    }
  }
  return files;
}

function pluginOf(exported: unknown): AgentPlugin {
  const value = (exported as { default?: unknown }).default ?? exported;
  if (typeof value === "function") return { register: value as AgentPlugin["register"] };
  if (value && typeof (value as AgentPlugin).register === "function") return value as AgentPlugin;
  throw new Error("the module exports neither a register function nor { register(api) }");
}

function checkTool(tool: AgentTool): string | undefined {
  if (!tool || typeof tool !== "object") return "not a tool object";
  if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) return `name must match ${TOOL_NAME.source}`;
  if (typeof tool.description !== "string" || tool.description === "") return "description is required";
  if (!tool.inputSchema || (tool.inputSchema as { type?: unknown }).type !== "object") {
    return 'inputSchema must be a JSON Schema with type "object"';
  }
  if (typeof tool.handler !== "function") return "handler must be a function";
  return undefined;
}

/**
 * Loads every plugin under the folder into the registry. A plugin that throws while loading is
 * reported (logged, status `failed`) and whatever it registered is removed; a tool whose name is
 * taken is skipped with a warning. Neither stops the runtime.
 */
export async function loadPlugins(dir: string, registry: ToolRegistry, logger: Logger): Promise<PluginReport[]> {
  const reports: PluginReport[] = [];
  for (const file of pluginFiles(dir)) {
    const origin = `plugin:${file}`;
    const report: PluginReport = { plugin: file, file, status: "loaded", tools: [], skipped: [] };
    reports.push(report);
    try {
      const plugin = pluginOf(await import(pathToFileURL(file).href));
      if (plugin.name) report.plugin = plugin.name;
      await plugin.register({
        logger: logger.child({ plugin: report.plugin }),
        registerTool(tool) {
          const reason = checkTool(tool) ?? registry.register(tool, origin);
          if (reason) {
            report.skipped.push({ tool: String(tool?.name), reason });
            logger.warn({ plugin: report.plugin, tool: tool?.name, reason }, "plugin tool skipped");
            return;
          }
          report.tools.push(tool.name);
        },
      });
      logger.info({ plugin: report.plugin, tools: report.tools }, "plugin loaded");
    } catch (err) {
      registry.unregisterOrigin(origin);
      report.status = "failed";
      report.tools = [];
      report.error = err instanceof Error ? err.message : String(err);
      logger.error({ plugin: report.plugin, file, err: report.error }, "plugin failed to load; skipped");
    }
  }
  return reports;
}
