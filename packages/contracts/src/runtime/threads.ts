import { z } from "@hono/zod-openapi";
import { HIDDEN_CHARACTERS } from "../common/hidden-characters.ts";

export const Thread = z
  .object({
    id: z.string(),
    title: z.string(),
    main: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    /** Tokens the model saw in the thread's last turn; null before the first turn or after a compaction. */
    contextTokens: z.number().int().nonnegative().nullable(),
    /** The window those tokens are measured against; null when the model's window is unknown. */
    contextWindow: z.number().int().positive().nullable(),
  })
  .openapi("Thread");

/** `nextCursor` is there while older threads remain: pass it back as `cursor` for the next page. */
export const ThreadList = z.object({ items: z.array(Thread), nextCursor: z.string().optional() }).openapi("ThreadList");

/** Threads per page when `limit` is not given, and the most a page holds. */
export const DEFAULT_THREAD_PAGE = 50;
export const MAX_THREAD_PAGE = 200;

export const ListThreadsQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_THREAD_PAGE)
    .default(DEFAULT_THREAD_PAGE)
    .openapi({ param: { name: "limit", in: "query" } }),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .openapi({ param: { name: "cursor", in: "query" }, description: "The previous page's `nextCursor`" }),
});

export const CreateThreadBody = z
  .object({
    // Shown in the web UI and the terminal UI (a title's escape sequence reached the terminal).
    title: z
      .string()
      .max(200)
      .refine(
        (title) => !HIDDEN_CHARACTERS.test(title.replaceAll("\u0000", "")),
        "must not contain control or bidirectional formatting characters",
      )
      .optional(),
  })
  .strict()
  .openapi("CreateThread");

export const ChatMessage = z
  .object({
    id: z.string(),
    threadId: z.string(),
    role: z.enum(["user", "assistant"]),
    text: z.string(),
    /** Where the message came from: a web turn, or a webhook delivery. */
    source: z.string(),
    createdAt: z.string(),
  })
  .openapi("ChatMessage");

export const ChatMessageList = z.object({ items: z.array(ChatMessage) }).openapi("ChatMessageList");

export const PostMessageBody = z
  .object({ text: z.string().min(1).max(100_000) })
  .strict()
  .openapi("PostMessage");

export const PostMessageQuery = z.object({
  stream: z
    .enum(["true", "false"])
    .default("true")
    .openapi({ param: { name: "stream", in: "query" } }),
});

/** The JSON answer of a non-streamed turn: the steps that were delivered to the channel. */
export const TurnResult = z
  .object({ userMessage: ChatMessage, delivered: z.array(ChatMessage), steps: z.number().int() })
  .openapi("TurnResult");

export type Thread = z.infer<typeof Thread>;
export type ChatMessage = z.infer<typeof ChatMessage>;
export type TurnResult = z.infer<typeof TurnResult>;

/**
 * Sent by the platform's gateway with a chat message it forwards: `false` when the caller does not
 * hold `agent:manage`, so the turn is not offered the tools that change the agent (its settings,
 * its schedules). It can only take rights away: the runtime's own clients send none.
 */
export const AGENT_MANAGE_HEADER = "x-agentplane-agent-manage";
