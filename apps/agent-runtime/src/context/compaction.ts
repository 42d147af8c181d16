import type { ContentBlockParam, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config.ts";
import type { ThreadContextTable } from "../db/schema/index.ts";
import { nowIso } from "../ids.ts";
import type { ModelClient } from "../models/provider.ts";
import type { ProductTelemetry } from "../observability/product-events.ts";
import type { MessageWriter } from "../services/message-writer.ts";
import type { MessageRow } from "../services/threads.ts";
import { historyOf, textOf } from "../turns/run-turn.ts";
import type { ContextWindowCatalog } from "./catalog.ts";

/** Messages of these sources are shown in the channel but never sent to the model (`/compact` and its answer). */
export const COMMAND_SOURCE = "command";

export interface CompactionDeps {
  sqlite: Database.Database;
  messages: MessageWriter;
  model: ModelClient;
  config: RuntimeConfig;
  catalog: ContextWindowCatalog;
  logger: Logger;
  telemetry?: ProductTelemetry;
}

export type CompactionResult =
  | { compacted: true; messages: number; throughSeq: number; summary: string }
  | { compacted: false; reason: string };

/** Prepared once per connection: every turn reads its thread's context (preparing cost more than the read). */
const readStatements = new WeakMap<Database.Database, Database.Statement<[string], ThreadContextTable>>();

function readContext(sqlite: Database.Database, threadId: string): ThreadContextTable | undefined {
  let statement = readStatements.get(sqlite);
  if (!statement) {
    statement = sqlite.prepare<[string], ThreadContextTable>("select * from thread_context where thread_id = ?");
    readStatements.set(sqlite, statement);
  }
  return statement.get(threadId);
}

function upsertContext(sqlite: Database.Database, threadId: string, patch: Partial<ThreadContextTable>): void {
  const current = readContext(sqlite, threadId);
  const row: ThreadContextTable = {
    thread_id: threadId,
    summary: null,
    through_seq: 0,
    compactions: 0,
    context_tokens: null,
    model_id: null,
    ...current,
    ...patch,
    updated_at: nowIso(),
  };
  sqlite
    .prepare(
      `insert into thread_context (thread_id, summary, through_seq, compactions, context_tokens, model_id, updated_at)
       values (@thread_id, @summary, @through_seq, @compactions, @context_tokens, @model_id, @updated_at)
       on conflict (thread_id) do update set summary = excluded.summary, through_seq = excluded.through_seq,
         compactions = excluded.compactions, context_tokens = excluded.context_tokens,
         model_id = excluded.model_id, updated_at = excluded.updated_at`,
    )
    .run(row);
}

export function threadContext(sqlite: Database.Database, threadId: string): ThreadContextTable | undefined {
  return readContext(sqlite, threadId);
}

const modelRows = (rows: MessageRow[]) => rows.filter((r) => r.source !== COMMAND_SOURCE);

/**
 * The model's view of a thread: the rolling summary (if any) as the opening user message, then
 * every stored message after it, oldest first. The stored messages themselves never change.
 */
export function contextHistory(deps: Pick<CompactionDeps, "sqlite" | "messages">, threadId: string): MessageParam[] {
  const context = readContext(deps.sqlite, threadId);
  const rows = modelRows(deps.messages.listAll(threadId)).filter((r) => r.seq > (context?.through_seq ?? 0));
  const history = historyOf(rows);
  if (!context?.summary) return history;
  const lead: ContentBlockParam = {
    type: "text",
    text: `Summary of the earlier part of this conversation (older messages were compacted):\n\n${context.summary}`,
  };
  const first = history[0];
  if (first?.role === "user") (first.content as ContentBlockParam[]).unshift(lead);
  else history.unshift({ role: "user", content: [lead] });
  return history;
}

export function recordContextTokens(
  sqlite: Database.Database,
  threadId: string,
  modelId: string,
  tokens: number,
): void {
  upsertContext(sqlite, threadId, { context_tokens: tokens, model_id: modelId });
}

function isToolResult(row: MessageRow | undefined): boolean {
  if (row?.role !== "user") return false;
  return (JSON.parse(row.content) as Array<{ type: string }>).some((b) => b.type === "tool_result");
}

/** One line per stored step, for the summarizer: text, tool calls and (shortened) tool results. */
function transcript(rows: MessageRow[]): string {
  const lines: string[] = [];
  for (const row of rows) {
    for (const block of JSON.parse(row.content) as Array<Record<string, unknown>>) {
      if (block.type === "text") lines.push(`${row.role}: ${String(block.text)}`);
      else if (block.type === "tool_use") lines.push(`assistant called ${block.name} ${JSON.stringify(block.input)}`);
      else if (block.type === "tool_result") {
        const content = typeof block.content === "string" ? block.content : JSON.stringify(block.content);
        lines.push(`tool result${block.is_error ? " (error)" : ""}: ${content.slice(0, 1000)}`);
      }
    }
  }
  return lines.join("\n");
}

/**
 * Folds everything older than the newest COMPACTION_TAIL_MESSAGES messages (and the previous
 * summary) into one new summary. The cut never falls between a tool call and its result: a tail
 * that would start at a tool result starts at the call before it.
 */
export async function compactThread(
  deps: CompactionDeps,
  threadId: string,
  modelId: string,
  focus?: string,
): Promise<CompactionResult> {
  const context = readContext(deps.sqlite, threadId);
  const rows = modelRows(deps.messages.listAll(threadId)).filter((r) => r.seq > (context?.through_seq ?? 0));
  const tail = deps.config.env.COMPACTION_TAIL_MESSAGES;
  let cut = rows.length - tail;
  while (cut > 0 && isToolResult(rows[cut])) cut -= 1;
  if (cut <= 0) {
    return {
      compacted: false,
      reason:
        context?.summary && rows.length <= tail
          ? `Nothing to compact: the conversation was already compacted and only the newest ${rows.length} messages follow the summary (the tail keeps ${tail}).`
          : `Nothing to compact: this conversation has ${rows.length} messages, no more than the ${tail} newest kept verbatim.`,
    };
  }
  const older = rows.slice(0, cut);
  const previous = context?.summary ? `Summary so far:\n${context.summary}\n\n` : "";
  const message = await deps.model.createMessage({
    model: modelId,
    max_tokens: 2048,
    system:
      "You compact conversations. Write one concise summary that replaces the earlier messages for the rest of the " +
      "conversation: facts, decisions, open tasks, names, numbers, file paths and tool outcomes that still matter. " +
      "Absorb the previous summary if one is given. Answer with the summary only.",
    messages: [
      {
        role: "user",
        content:
          `${previous}Messages to fold into the summary:\n${transcript(older)}` +
          (focus ? `\n\nFocus the summary on: ${focus}` : ""),
      },
    ],
  });
  const summary = textOf(message.content);
  if (summary === "") throw new Error("the model returned an empty summary");
  const throughSeq = (older.at(-1) as MessageRow).seq;
  upsertContext(deps.sqlite, threadId, {
    summary,
    through_seq: throughSeq,
    compactions: (context?.compactions ?? 0) + 1,
    context_tokens: null,
  });
  deps.logger.info({ threadId, messages: older.length, throughSeq }, "thread compacted");
  deps.telemetry?.emit("compaction.ran", {
    "thread.id": threadId,
    "compaction.messages": older.length,
    trigger: focus === undefined ? "threshold" : "command",
  });
  return { compacted: true, messages: older.length, throughSeq, summary };
}

/**
 * After a turn in a stored thread: records the occupancy and compacts when it passed
 * COMPACTION_THRESHOLD_PERCENT of the model's window. Off when the threshold is 0 or the window
 * is unknown; team-chat threads are exempt (they re-read history live). A context that is
 * already compacted down to its tail is not compacted again.
 */
export async function afterTurn(
  deps: CompactionDeps,
  thread: { id: string; kind: string },
  modelId: string,
  tokens: number,
): Promise<CompactionResult | undefined> {
  recordContextTokens(deps.sqlite, thread.id, modelId, tokens);
  const threshold = deps.config.env.COMPACTION_THRESHOLD_PERCENT;
  if (threshold === 0 || thread.kind === "team-chat") return undefined;
  const window = deps.catalog.windowOf(modelId);
  if (window === null || tokens * 100 < window * threshold) return undefined;
  try {
    const result = await compactThread(deps, thread.id, modelId);
    return result;
  } catch (err) {
    deps.logger.warn(
      { threadId: thread.id, err: (err as Error).message },
      "compaction failed; the full history is kept",
    );
    return { compacted: false, reason: (err as Error).message };
  }
}
