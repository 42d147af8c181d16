import type { Reply, ReplyBlock } from "./fake-model.ts";

export interface ToolResultSeen {
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** The tool results the model received in the last user message of a request body. */
export function toolResultsOf(body: Record<string, unknown>): ToolResultSeen[] {
  const messages = (body.messages ?? []) as Array<{ role: string; content: Array<Record<string, unknown>> | string }>;
  const last = messages.at(-1);
  if (!last || typeof last.content === "string") return [];
  return last.content.filter((b) => b.type === "tool_result") as unknown as ToolResultSeen[];
}

let nextId = 0;
export function toolUse(name: string, input: Record<string, unknown>): ReplyBlock {
  nextId += 1;
  return { type: "tool_use", id: `toolu_${nextId}`, name, input };
}

/**
 * A model that plays a fixed script: call N of the current turn gets `steps[N]` (a reply, or a
 * function of the request body). A turn starts at a request whose last message holds no tool result.
 */
export function scripted(
  steps: Array<Reply | ((body: Record<string, unknown>) => Reply)>,
): (body: Record<string, unknown>) => Reply {
  let index = 0;
  return (body) => {
    if (toolResultsOf(body).length === 0) index = 0;
    const step = steps[Math.min(index, steps.length - 1)];
    index += 1;
    if (step === undefined) return { content: [{ type: "text", text: "(script ended)" }] };
    return typeof step === "function" ? step(body) : step;
  };
}

export const text = (t: string): Reply => ({ content: [{ type: "text", text: t }] });
export const calls = (...blocks: ReplyBlock[]): Reply => ({ content: blocks });
