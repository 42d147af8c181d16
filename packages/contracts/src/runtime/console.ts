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
    shared: z.boolean().openapi({
      description:
        "Shared with the team: found by the turns of channel members in team chat (decision 0035); otherwise the owner's only",
    }),
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

/** The `{id}` of a memory note's path. */
const MemoryNoteIdParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" } }),
});

export const deleteMemoryNoteRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "delete",
    path: "/agents/memory/{id}",
    operationId: "deleteMemoryNote",
    request: {
      params: MemoryNoteIdParam,
    },
    responses: { 204: { description: "Deleted" } },
  },
);

export const UpdateMemoryNoteBody = z
  .object({
    shared: z.boolean().openapi({ description: "true: share the note with the team; false: the owner's only" }),
  })
  .strict()
  .openapi("UpdateMemoryNoteBody");

export const updateMemoryNoteRoute = defineRuntimeRoute(
  { errors: [400, 404] },
  {
    method: "patch",
    path: "/agents/memory/{id}",
    operationId: "updateMemoryNote",
    summary: "Share a memory note with the team, or make it the owner's only",
    request: {
      params: MemoryNoteIdParam,
      body: { required: true, content: { "application/json": { schema: UpdateMemoryNoteBody } } },
    },
    responses: { 200: json(MemoryNote, "The note as it is now") },
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
export type UpdateMemoryNoteBody = z.infer<typeof UpdateMemoryNoteBody>;
export type HeartbeatSettings = z.infer<typeof HeartbeatSettings>;
