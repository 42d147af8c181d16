import type { Tool } from "@anthropic-ai/sdk/resources/messages";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Provider } from "../config.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";

/** What a tool call answers: the text the model sees, and whether it is an error result. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
}

/** What a tool handler may use while it runs: the turn it belongs to. */
export interface ToolContext {
  db: Kysely<RuntimeDatabase>;
  provider: Provider;
  threadId: string;
  /** Who started the turn: `web`, `heartbeat`, `schedule:<name>`, `webhook:<name>`. */
  source: string;
  logger: Logger;
  signal?: AbortSignal;
}

/** A JSON Schema object describing a tool's input (the Messages API `input_schema`). */
export type ToolInputSchema = Tool["input_schema"];

/**
 * One tool the model can call. Plugins implement the same interface (see src/tools/plugins.ts):
 * a name (`^[a-zA-Z0-9_-]{1,64}$`), a description the model reads, a JSON Schema of the input,
 * and a handler. A handler that throws is reported to the model as an error result.
 */
export interface AgentTool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  handler(input: unknown, context: ToolContext): Promise<ToolOutcome> | ToolOutcome;
}

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function toolError(content: string): ToolOutcome {
  return { content, isError: true };
}

export function toolResult(value: unknown): ToolOutcome {
  return { content: typeof value === "string" ? value : JSON.stringify(value), isError: false };
}

/** The tools of one runtime, by name. Later registrations of a taken name are refused. */
export class ToolRegistry {
  readonly #tools = new Map<string, { tool: AgentTool; origin: string }>();
  /** Extra tools looked up on each call (skills change while the runtime runs). */
  readonly #dynamic: Array<() => AgentTool[]> = [];

  /** Adds a tool; returns why it was refused (duplicate or bad name), or undefined when added. */
  register(tool: AgentTool, origin = "core"): string | undefined {
    if (!TOOL_NAME.test(tool.name)) return `tool name "${tool.name}" must match ${TOOL_NAME.source}`;
    const taken = this.#tools.get(tool.name);
    if (taken) return `tool "${tool.name}" is already registered by ${taken.origin}`;
    this.#tools.set(tool.name, { tool, origin });
    return undefined;
  }

  /** Removes every tool registered with this origin (a plugin being reloaded). */
  unregisterOrigin(origin: string): void {
    for (const [name, entry] of this.#tools) if (entry.origin === origin) this.#tools.delete(name);
  }

  addDynamic(source: () => AgentTool[]): void {
    this.#dynamic.push(source);
  }

  list(): AgentTool[] {
    const tools = [...this.#tools.values()].map((e) => e.tool);
    for (const source of this.#dynamic) {
      for (const tool of source()) if (!this.#tools.has(tool.name)) tools.push(tool);
    }
    return tools;
  }

  get(name: string): AgentTool | undefined {
    return this.#tools.get(name)?.tool ?? this.list().find((t) => t.name === name);
  }

  origin(name: string): string | undefined {
    return this.#tools.get(name)?.origin;
  }

  /** The Messages API `tools` parameter. */
  definitions(): Tool[] {
    return this.list().map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  }

  /** Runs one call; an unknown tool or a throwing handler becomes an error result, never a failed turn. */
  async run(name: string, input: unknown, context: ToolContext): Promise<ToolOutcome> {
    const tool = this.get(name);
    if (!tool) return toolError(`Unknown tool ${name}`);
    try {
      return await tool.handler(input, context);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      context.logger.warn({ tool: name, err: message }, "tool failed");
      return toolError(`The tool ${name} failed: ${message.slice(0, 2000)}`);
    }
  }
}
