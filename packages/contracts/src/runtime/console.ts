import { z } from "@hono/zod-openapi";
import { defineRuntimeRoute } from "./define-route.ts";

// Operations the runtime's own web and terminal UIs need beyond the chat, settings, webhook and
// schedule endpoints: stopping a turn, the memory notes, the heartbeat's checklist.

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const StopTurnResult = z
  .object({ stopped: z.boolean().openapi({ description: "false: no turn was running in the thread" }) })
  .openapi("StopTurnResult");

export const stopThreadTurnRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "post",
    path: "/agents/threads/{threadId}/stop",
    operationId: "stopThreadTurn",
    summary: "Stop the running turn of a thread",
    description:
      "Aborts the model call or tool in progress; the steps already stored stay, and the thread is told the turn was stopped.",
    request: {
      params: z.object({
        threadId: z
          .string()
          .min(1)
          .openapi({ param: { name: "threadId", in: "path" } }),
      }),
    },
    responses: { 200: json(StopTurnResult, "Whether a turn was stopped") },
  },
);

export const MemoryNote = z
  .object({
    id: z.string(),
    text: z.string(),
    source: z.string(),
    createdAt: z.string(),
    /** The merged search score; absent when listing the newest notes. */
    score: z.number().optional(),
  })
  .openapi("MemoryNote");

export const MemoryNoteList = z.object({ items: z.array(MemoryNote) }).openapi("MemoryNoteList");

export const listMemoryNotesRoute = defineRuntimeRoute(
  { errors: [] },
  {
    method: "get",
    path: "/agents/memory",
    operationId: "listMemoryNotes",
    summary: "Search the agent's memory notes (newest first without a query)",
    request: {
      query: z.object({
        q: z
          .string()
          .max(1000)
          .optional()
          .openapi({ param: { name: "q", in: "query" } }),
        limit: z.coerce
          .number()
          .int()
          .min(1)
          .max(200)
          .default(50)
          .openapi({ param: { name: "limit", in: "query" } }),
      }),
    },
    responses: { 200: json(MemoryNoteList, "Notes: best match first, or newest first") },
  },
);

export const deleteMemoryNoteRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "delete",
    path: "/agents/memory/{id}",
    operationId: "deleteMemoryNote",
    request: {
      params: z.object({
        id: z
          .string()
          .min(1)
          .openapi({ param: { name: "id", in: "path" } }),
      }),
    },
    responses: { 204: { description: "Deleted" } },
  },
);

export const HeartbeatSettings = z
  .object({
    intervalMinutes: z.number().int().nonnegative().openapi({ description: "0: heartbeat runs are off" }),
    /**
     * `<data dir>/HEARTBEAT.md`; empty when missing. Where the data directory lies on the server is
     * not told: every caller with read access (a project viewer through the platform) sees this.
     */
    checklist: z.string(),
  })
  .openapi("HeartbeatSettings");

export const getHeartbeatSettingsRoute = defineRuntimeRoute(
  { errors: [] },
  {
    method: "get",
    path: "/agents/heartbeat",
    operationId: "getHeartbeatSettings",
    responses: { 200: json(HeartbeatSettings, "The heartbeat interval and checklist") },
  },
);

export type MemoryNote = z.infer<typeof MemoryNote>;
export type HeartbeatSettings = z.infer<typeof HeartbeatSettings>;
