import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from "@anthropic-ai/sdk/resources/messages";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Provider } from "../config.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";
import type { ModelClient } from "../models/provider.ts";
import type { MessageWriter } from "../services/message-writer.ts";
import type { MessageRow } from "../services/threads.ts";
import type { ToolRegistry } from "../tools/types.ts";

/** What a live follower of the thread sees while a turn runs (spec "Live streaming to chat"). */
export type TurnEvent =
  | { type: "delta"; step: number; text: string }
  | { type: "step"; step: number; messageId: string; delivered: boolean }
  | { type: "tool_call"; step: number; id: string; name: string; input: unknown }
  | { type: "tool_result"; step: number; id: string; name: string; content: string; isError: boolean };

export const DEFAULT_MAX_STEPS = 24;

export interface TurnInput {
  db: Kysely<RuntimeDatabase>;
  messages: MessageWriter;
  model: ModelClient;
  /** The tools check model ids against the provider's rules. */
  provider: Provider;
  modelId: string;
  tools: ToolRegistry;
  logger: Logger;
  threadId: string;
  userText: string;
  verbose: boolean;
  system: string;
  /** Who started the turn: `web`, `webhook:<name>`, … (stored on every step). */
  source: string;
  /** The agent's owner started the turn: the tools that change the agent are offered (`ToolOffer`). */
  manage: boolean;
  /** Someone other than the owner started the turn in team chat (`ToolContext.teamMember`). */
  teamMember?: boolean;
  /** Called with the stored user message, before the first model call. */
  onUserMessage?: (message: MessageRow) => void;
  /** Called with every step delivered to the channel, as it is delivered. */
  onDelivered?: (message: MessageRow) => void;
  /** Deltas, step boundaries and (verbose on) tool calls and results, as they happen. */
  onEvent?: (event: TurnEvent) => void;
  /** Called as each tool starts, whatever the verbose setting (a working indication names it). */
  onToolStart?: (name: string) => void;
  /** The model's view of the thread (compaction replaces older steps by a summary). */
  buildHistory?: (threadId: string) => MessageParam[];
  maxSteps?: number;
  maxTokens?: number;
  /** Aborted: the model call or tool in progress is cut short and the turn ends with a notice. */
  signal?: AbortSignal;
}

export interface TurnOutcome {
  userMessage: MessageRow;
  delivered: MessageRow[];
  steps: number;
  /** The turn stopped at the step limit; its last delivered message says so. */
  stepLimitReached: boolean;
  /** Tokens the last model call saw and wrote (input, cache reads and writes, output): the context occupancy. */
  contextTokens: number;
  /** The turn was stopped (its signal aborted); its last delivered message says so. */
  stopped?: boolean;
}

export const STOPPED_NOTICE = "Stopped: the turn was cut short at your request. The steps before it are kept.";

export class TurnError extends Error {
  override readonly name = "TurnError";
}

function tokensOf(usage: Partial<Record<string, unknown>> | undefined): number {
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  if (!usage) return 0;
  return (
    n(usage.input_tokens) +
    n(usage.cache_read_input_tokens) +
    n(usage.cache_creation_input_tokens) +
    n(usage.output_tokens)
  );
}

export function textOf(blocks: ReadonlyArray<{ type: string; text?: string }>): string {
  return blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text ?? "")
    .join("")
    .trim();
}

/** The stored steps as Messages API history; consecutive same-role steps are merged. */
export function historyOf(rows: MessageRow[]): MessageParam[] {
  const history: MessageParam[] = [];
  for (const row of rows) {
    const content = JSON.parse(row.content) as ContentBlockParam[];
    const last = history[history.length - 1];
    if (last && last.role === row.role) {
      (last.content as ContentBlockParam[]).push(...content);
    } else {
      history.push({ role: row.role, content: [...content] });
    }
  }
  // Deliveries (webhook results) can open a thread; the Messages API wants a user turn first.
  if (history[0]?.role === "assistant") {
    history.unshift({
      role: "user",
      content: [{ type: "text", text: "(earlier messages of this conversation follow)" }],
    });
  }
  return history;
}

/**
 * One agent turn: model call, tool calls, tool results, until a final answer. Every step is
 * stored. With verbose off only the last text step is delivered (earlier ones stay internal);
 * with verbose on each text step is delivered as it arrives.
 */
export async function runTurn(input: TurnInput): Promise<TurnOutcome> {
  const { db, messages, threadId, source } = input;
  const maxSteps = input.maxSteps ?? DEFAULT_MAX_STEPS;
  const emit = input.onEvent;
  const buildHistory = input.buildHistory ?? ((id: string) => historyOf(messages.listAll(id)));
  const signal = input.signal;
  // A schedule's prompt is the owner's own (only the owner manages schedules): `schedule:<name>`.
  const offer = { manage: input.manage, scheduled: source.startsWith("schedule:") };
  const toolContext = {
    db,
    provider: input.provider,
    threadId,
    source,
    ...(input.teamMember ? { teamMember: true } : {}),
    ...(input.manage ? { owner: true } : {}),
    logger: input.logger,
    ...(signal ? { signal } : {}),
  };
  const userMessage = await messages.append({
    threadId,
    role: "user",
    content: [{ type: "text", text: input.userText }],
    text: input.userText,
    internal: false,
    source,
  });
  input.onUserMessage?.(userMessage);
  const delivered: MessageRow[] = [];
  const deliver = (row: MessageRow) => {
    delivered.push(row);
    input.onDelivered?.(row);
  };
  let lastHiddenText: MessageRow | undefined;
  let contextTokens = 0;
  const stop = async (step: number): Promise<TurnOutcome> => {
    const row = await messages.append({
      threadId,
      role: "assistant",
      content: [{ type: "text", text: STOPPED_NOTICE }],
      text: STOPPED_NOTICE,
      internal: false,
      source,
    });
    emit?.({ type: "step", step, messageId: row.id, delivered: true });
    deliver(row);
    return { userMessage, delivered, steps: step - 1, stepLimitReached: false, contextTokens, stopped: true };
  };

  for (let step = 1; step <= maxSteps; step++) {
    if (signal?.aborted) return stop(step);
    const history = buildHistory(threadId);
    const definitions = input.tools.definitions(offer);
    let message: Awaited<ReturnType<ModelClient["createMessage"]>>;
    try {
      message = await input.model.createMessage(
        {
          model: input.modelId,
          max_tokens: input.maxTokens ?? 4096,
          system: input.system,
          messages: history,
          ...(definitions.length > 0 ? { tools: definitions } : {}),
        },
        {
          ...(emit ? { onText: (text: string) => emit({ type: "delta", step, text }) } : {}),
          ...(signal ? { signal } : {}),
        },
      );
    } catch (err) {
      if (signal?.aborted) return stop(step);
      throw err;
    }
    contextTokens = tokensOf(message.usage as unknown as Record<string, unknown>);
    const toolUses = message.content.filter((b) => b.type === "tool_use");
    const text = textOf(message.content);
    const final = toolUses.length === 0;
    const deliverNow = text !== "" && (input.verbose || final);
    const row = await messages.append({
      threadId,
      role: "assistant",
      content: message.content as unknown as ContentBlockParam[],
      text,
      internal: !deliverNow,
      source,
    });
    emit?.({ type: "step", step, messageId: row.id, delivered: deliverNow });
    if (deliverNow) deliver(row);
    else if (text !== "") lastHiddenText = row;

    if (final) {
      // A final step without text: the last text step of the turn is the one the channel gets.
      if (text === "" && !input.verbose && lastHiddenText) {
        await db.updateTable("message").set({ internal: 0 }).where("id", "=", lastHiddenText.id).execute();
        deliver({ ...lastHiddenText, internal: 0 });
      }
      return { userMessage, delivered, steps: step, stepLimitReached: false, contextTokens };
    }

    const results: ToolResultBlockParam[] = [];
    for (const use of toolUses) {
      if (input.verbose) emit?.({ type: "tool_call", step, id: use.id, name: use.name, input: use.input });
      input.onToolStart?.(use.name);
      const outcome = await input.tools.run(use.name, use.input, toolContext, offer);
      if (input.verbose) emit?.({ type: "tool_result", step, id: use.id, name: use.name, ...outcome });
      results.push({ type: "tool_result", tool_use_id: use.id, content: outcome.content, is_error: outcome.isError });
    }
    await messages.append({ threadId, role: "user", content: results, text: "", internal: true, source: "tool" });
    if (signal?.aborted) return stop(step + 1);
  }
  // The tool results of the last step stay stored; the channel is told why the turn stopped.
  const notice =
    `I stopped before finishing: this turn reached its limit of ${maxSteps} model steps ` +
    "(tool calls included) without a final answer. Ask me to continue if you want me to go on.";
  const row = await messages.append({
    threadId,
    role: "assistant",
    content: [{ type: "text", text: notice }],
    text: notice,
    internal: false,
    source,
  });
  emit?.({ type: "step", step: maxSteps + 1, messageId: row.id, delivered: true });
  deliver(row);
  return { userMessage, delivered, steps: maxSteps, stepLimitReached: true, contextTokens };
}
