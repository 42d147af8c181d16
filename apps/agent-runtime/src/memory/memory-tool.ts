import { z } from "zod";
import type { ProductTelemetry } from "../observability/product-events.ts";
import { type AgentTool, toolError, toolResult } from "../tools/types.ts";
import { MemoryFullError, type MemoryStore } from "./store.ts";

const Input = z.discriminatedUnion("action", [
  z.object({ action: z.literal("remember"), text: z.string().min(1).max(20_000) }),
  z.object({
    action: z.literal("search"),
    query: z.string().min(1).max(2000),
    limit: z.number().int().min(1).max(50).optional(),
  }),
  z.object({ action: z.literal("forget"), id: z.string().min(1) }),
  z.object({ action: z.literal("share"), id: z.string().min(1), shared: z.boolean() }),
]);

/** What `share` answers in a turn the owner did not start. */
export const SHARE_REFUSED =
  "Only the agent's owner can change which notes are shared with the team, in their own conversations " +
  "(the web chat, the terminal UI, their own team-chat messages).";

/** The agent's long-term notes: remember, search (hybrid text and meaning), forget, share (the owner's turns). */
export function memoryTool(store: MemoryStore, telemetry?: ProductTelemetry): AgentTool {
  return {
    name: "memory",
    description:
      "Your long-term memory. remember: store a note (facts, preferences, decisions worth keeping). " +
      "search: find notes by words and meaning (best first). forget: delete a note by id. " +
      "share: on the owner's request only, share a note by id with the team (shared: true; team members' " +
      "conversations find it) or make it the owner's only again (shared: false).",
    inputSchema: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["remember", "search", "forget", "share"] },
        text: { type: "string" },
        query: { type: "string" },
        id: { type: "string" },
        shared: { type: "boolean" },
        limit: { type: "integer", minimum: 1, maximum: 50 },
      },
      required: ["action"],
      additionalProperties: false,
    },
    async handler(raw, context) {
      const parsed = Input.safeParse(raw);
      if (!parsed.success) {
        return toolError(
          `Invalid input: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        );
      }
      const input = parsed.data;
      // Someone other than the owner started the turn in team chat: what it remembers is shared
      // with the team, and it reaches only shared notes, never what the owner said in private.
      const sharedOnly = context.teamMember === true;
      if (input.action === "remember") {
        try {
          return toolResult(await store.add(input.text, context.source, { shared: sharedOnly }));
        } catch (err) {
          if (!(err instanceof MemoryFullError)) throw err;
          return toolError(
            `${err.message}; this note was not stored. Forget notes that are no longer needed, then remember it again.`,
          );
        }
      }
      if (input.action === "forget") {
        return store.forget(input.id, { sharedOnly })
          ? toolResult({ forgotten: input.id })
          : toolError(`No note ${input.id}`);
      }
      if (input.action === "share") {
        // The owner decides what the team sees: never a member's turn, nor one whose input comes
        // from outside (a webhook) or no one (heartbeat, schedules).
        if (context.owner !== true || sharedOnly) {
          context.logger.info(
            { source: context.source },
            "a change to a note's sharing was refused: not the owner's turn",
          );
          return toolError(SHARE_REFUSED);
        }
        const note = store.setShared(input.id, input.shared);
        return note ? toolResult({ id: note.id, shared: note.shared }) : toolError(`No note ${input.id}`);
      }
      const started = performance.now();
      const hits = await store.search(input.query, input.limit ?? 5, { sharedOnly });
      telemetry?.emit("memory.search", {
        "memory.results": hits.length,
        "memory.duration_ms": performance.now() - started,
      });
      return toolResult({
        hits: hits.map((h) => ({
          id: h.id,
          text: h.text,
          createdAt: h.createdAt,
          shared: h.shared,
          score: Number(h.score.toFixed(4)),
        })),
      });
    },
  };
}
