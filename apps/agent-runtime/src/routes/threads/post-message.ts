import { AGENT_MANAGE_HEADER, postThreadMessageRoute } from "@agentplane/contracts/runtime";
import { ProblemError } from "@agentplane/problem-details";
import { streamSSE } from "hono/streaming";
import type { RuntimeDeps } from "../../deps.ts";
import { runAgentTurn } from "../../services/agent-turns.ts";
import { getWebThread, toChatMessage } from "../../services/threads.ts";
import { WebTurnSlots } from "../../services/web-turn-slots.ts";
import type { RuntimeApp } from "../types.ts";

/**
 * The provider SDKs put the answer's JSON body in the message (`503 {"type":…,"detail":…}`): the
 * words a person needs are its problem `detail` (the gateway's, e.g. which credential to set) or
 * the provider's `error.message`, not the raw JSON cut off at some length.
 */
function readableCause(message: string): string {
  const match = /^(\d{3}) (\{[\s\S]*\})$/.exec(message.trim());
  if (!match) return message;
  try {
    const body = JSON.parse(match[2]!) as { detail?: unknown; title?: unknown; error?: { message?: unknown } };
    const words = [body.detail, body.error?.message, body.title].find((w) => typeof w === "string" && w.length > 0);
    return typeof words === "string" ? `the model call answered ${match[1]}: ${words}` : message;
  } catch {
    return message;
  }
}

function modelFailure(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  const detail = readableCause(err instanceof Error ? err.message : String(err));
  return new ProblemError("bad-gateway", { detail: `The turn failed: ${detail.slice(0, 600)}` });
}

/** A turn in a web thread; past the turns in flight WebTurnSlots allows, a 429 that starts nothing. */
export function registerPostThreadMessage(app: RuntimeApp, deps: RuntimeDeps): void {
  const slots = new WebTurnSlots();
  app.openapi(postThreadMessageRoute, async (c) => {
    const { threadId } = c.req.valid("param");
    const { text } = c.req.valid("json");
    const { stream } = c.req.valid("query");
    const thread = await getWebThread(deps.database.db, threadId);
    // Fronted by the platform, a caller without `agent:manage` may chat but not change the agent.
    const said = c.req.header(AGENT_MANAGE_HEADER);
    const manage = said === undefined || said === "true";
    const turn = { threadId: thread.id, text, source: "web", manage };
    const release = slots.take(thread.id);

    if (stream === "false") {
      try {
        const outcome = await runAgentTurn(deps, turn);
        return c.json(
          {
            userMessage: toChatMessage(outcome.userMessage),
            delivered: outcome.delivered.map(toChatMessage),
            steps: outcome.steps,
          },
          200,
        );
      } catch (err) {
        deps.logger.error({ err, threadId }, "turn failed");
        throw modelFailure(err);
      } finally {
        release();
      }
    }

    // Each delivered step is sent as it is delivered: with verbose on that is every text step,
    // with verbose off only the last one.
    return streamSSE(c, async (sse) => {
      const writes: Promise<void>[] = [];
      try {
        const outcome = await runAgentTurn(deps, {
          ...turn,
          onDelivered: (message) => {
            writes.push(
              sse.writeSSE({ event: "message", id: message.id, data: JSON.stringify(toChatMessage(message)) }),
            );
          },
        });
        await Promise.all(writes);
        await sse.writeSSE({
          event: "done",
          data: JSON.stringify({
            userMessageId: outcome.userMessage.id,
            delivered: outcome.delivered.length,
            steps: outcome.steps,
          }),
        });
      } catch (err) {
        deps.logger.error({ err, threadId }, "turn failed");
        await Promise.allSettled(writes);
        await sse.writeSSE({ event: "error", data: JSON.stringify(modelFailure(err).toBody()) });
      } finally {
        release();
      }
    });
  });
}
