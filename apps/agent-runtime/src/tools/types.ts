import type { Tool } from "@anthropic-ai/sdk/resources/messages";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Provider } from "../config.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";
import { redactCredentials } from "../observability/credentials.ts";

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
  /**
   * The turn was started in team chat by someone other than the owner (a channel member, another
   * bot): it reaches only what is shared with the team, never the owner's own notes.
   */
  teamMember?: boolean;
  /**
   * The agent's owner started the turn (web chat, the terminal UI, their own team-chat messages):
   * what only the owner decides (which notes are shared) is theirs alone.
   */
  owner?: boolean;
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
  /**
   * Changes the agent itself (its settings, its schedules): offered, and run, only in turns its
   * owner started (see `ToolOffer`), as the HTTP API asks a manage permission for the same changes.
   */
  manages?: boolean;
  /**
   * Acts in the owner's name outside the runtime (joins a meeting as the owner's meeting account):
   * offered, and run, in turns the owner started or scheduled, never in those driven by someone
   * else (a team-chat member, a webhook's payload, a chat user without the manage permission).
   */
  actsForOwner?: boolean;
}

/** Which tools a turn is offered. */
export interface ToolOffer {
  /** The turn was started by the agent's owner: the tools that change the agent are offered. */
  manage: boolean;
  /** The turn runs a schedule's prompt, which only the owner can write: `actsForOwner` tools are offered. */
  scheduled?: boolean;
}

/** Whether a turn with `offer` is offered `tool`. */
export function offered(tool: Pick<AgentTool, "manages" | "actsForOwner">, offer: ToolOffer): boolean {
  if (tool.manages && !offer.manage) return false;
  return !tool.actsForOwner || offer.manage || offer.scheduled === true;
}

/** What a call to a managing tool answers in a turn that was not offered it. */
export const NOT_OFFERED =
  "is not available in this conversation: only the agent's owner can change its settings and schedules, " +
  "from the web chat, the terminal UI or their own team-chat messages.";

/** What a call to a tool that acts for the owner answers in a turn that was not offered it. */
export const NOT_OFFERED_FOR_OWNER =
  "is not available in this conversation: it acts in the owner's name, so only the owner's own turns " +
  "(the web chat, the terminal UI, their team-chat messages) and their schedules may use it.";

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
  /** The secret values masked in every result (`RuntimeSecrets.values`); none until set. */
  #secrets: () => readonly string[] = () => [];

  /**
   * Masks these values in every tool result, before a turn stores it in the thread (which project
   * viewers read), streams it or sends it to the model: a command that prints a token, a file that
   * holds one. Read per call: the webhook secrets change while the runtime runs.
   */
  maskSecrets(secrets: () => readonly string[]): void {
    this.#secrets = secrets;
  }

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

  /** The Messages API `tools` parameter: the tools offered to a turn. */
  definitions(offer: ToolOffer = { manage: false }): Tool[] {
    return this.list()
      .filter((t) => offered(t, offer))
      .map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  }

  /**
   * Runs one call; an unknown tool, one not offered to the turn (a model can name any tool) or a
   * throwing handler becomes an error result, never a failed turn.
   */
  async run(
    name: string,
    input: unknown,
    context: ToolContext,
    offer: ToolOffer = { manage: false },
  ): Promise<ToolOutcome> {
    const outcome = await this.#run(name, input, context, offer);
    return { ...outcome, content: redactCredentials(outcome.content, this.#secrets()) };
  }

  async #run(name: string, input: unknown, context: ToolContext, offer: ToolOffer): Promise<ToolOutcome> {
    const tool = this.get(name);
    if (!tool) return toolError(`Unknown tool ${name}`);
    if (!offered(tool, offer)) {
      context.logger.info(
        { tool: name, source: context.source },
        tool.manages
          ? "a tool that changes the agent was refused: not the owner's turn"
          : "a tool that acts for the owner was refused: not the owner's turn or schedule",
      );
      return toolError(`The tool ${name} ${tool.manages ? NOT_OFFERED : NOT_OFFERED_FOR_OWNER}`);
    }
    try {
      return await tool.handler(input, context);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      context.logger.warn({ tool: name, err: message }, "tool failed");
      return toolError(`The tool ${name} failed: ${message.slice(0, 2000)}`);
    }
  }
}
