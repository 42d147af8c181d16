import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from "@anthropic-ai/sdk/resources/messages";
import type { Kysely } from "kysely";
import type { Provider } from "../config.ts";
import type { RuntimeDatabase } from "../db/schema/index.ts";
import type { ModelClient } from "../models/provider.ts";
import type { MessageWriter } from "../services/message-writer.ts";
import type { MessageRow } from "../services/threads.ts";
import { runSettingsTool, SETTINGS_TOOL_NAME, settingsTool, type ToolOutcome } from "./settings-tool.ts";

export interface TurnInput {
  db: Kysely<RuntimeDatabase>;
  messages: MessageWriter;
  model: ModelClient;
  /** The tools check model ids against the provider's rules. */
  provider: Provider;
  modelId: string;
  threadId: string;
  userText: string;
  verbose: boolean;
  system: string;
  /** Who started the turn: `web`, `webhook:<name>`, … (stored on every step). */
  source: string;
  /** Called with every step delivered to the channel, as it is delivered. */
  onDelivered?: (message: MessageRow) => void;
  maxSteps?: number;
  maxTokens?: number;
}

export interface TurnOutcome {
  userMessage: MessageRow;
  delivered: MessageRow[];
  steps: number;
}

export class TurnError extends Error {
  override readonly name = "TurnError";
}

function textOf(blocks: ReadonlyArray<{ type: string; text?: string }>): string {
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

async function runTool(turn: TurnInput, name: string, input: unknown): Promise<ToolOutcome> {
  if (name === SETTINGS_TOOL_NAME) return runSettingsTool(turn.db, turn.provider, input);
  return { content: `Unknown tool ${name}`, isError: true };
}

/**
 * One agent turn: model call, tool calls, tool results, until a final answer. Every step is
 * stored. With verbose off only the last text step is delivered (earlier ones stay internal);
 * with verbose on each text step is delivered as it arrives.
 */
export async function runTurn(input: TurnInput): Promise<TurnOutcome> {
  const { db, messages, threadId, source } = input;
  const maxSteps = input.maxSteps ?? 12;
  const userMessage = await messages.append({
    threadId,
    role: "user",
    content: [{ type: "text", text: input.userText }],
    text: input.userText,
    internal: false,
    source,
  });
  const delivered: MessageRow[] = [];
  const deliver = (row: MessageRow) => {
    delivered.push(row);
    input.onDelivered?.(row);
  };
  let lastHiddenText: MessageRow | undefined;

  for (let step = 1; step <= maxSteps; step++) {
    const history = historyOf(messages.listAll(threadId));
    const message = await input.model.createMessage({
      model: input.modelId,
      max_tokens: input.maxTokens ?? 4096,
      system: input.system,
      messages: history,
      tools: [settingsTool],
    });
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
    if (deliverNow) deliver(row);
    else if (text !== "") lastHiddenText = row;

    if (final) {
      // A final step without text: the last text step of the turn is the one the channel gets.
      if (text === "" && !input.verbose && lastHiddenText) {
        await db.updateTable("message").set({ internal: 0 }).where("id", "=", lastHiddenText.id).execute();
        deliver({ ...lastHiddenText, internal: 0 });
      }
      return { userMessage, delivered, steps: step };
    }

    const results: ToolResultBlockParam[] = [];
    for (const use of toolUses) {
      const outcome = await runTool(input, use.name, use.input);
      results.push({ type: "tool_result", tool_use_id: use.id, content: outcome.content, is_error: outcome.isError });
    }
    await messages.append({ threadId, role: "user", content: results, text: "", internal: true, source: "tool" });
  }
  throw new TurnError(`the turn did not reach a final answer within ${maxSteps} steps`);
}
