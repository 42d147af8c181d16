import type { DeliveryTarget } from "@agentplane/contracts/runtime";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { RuntimeDatabase } from "../db/schema/index.ts";
import { redactCredentials } from "../observability/credentials.ts";
import type { MessageWriter } from "../services/message-writer.ts";
import { type MessageRow, teamChatThread } from "../services/threads.ts";
import { selectTeamChatDestination, type TeamChatAdapter } from "./team-chat.ts";

export interface DeliveryDeps {
  db: Kysely<RuntimeDatabase>;
  messages: MessageWriter;
  teamChat: TeamChatAdapter | null;
  logger: Logger;
  /** Live listeners of the web chat (a message stored in a web thread). */
  onWebMessage?: (message: MessageRow) => void;
  /** The runtime's credential values and webhook secrets, posted and stored as `[redacted]`. */
  secrets?: () => readonly string[];
}

export interface DeliveryReport {
  web: boolean;
  teamChat: string | null;
}

async function postToWeb(deps: DeliveryDeps, text: string, source: string): Promise<void> {
  const row = await deps.messages.append({
    threadId: deps.messages.mainWebThreadId(),
    role: "assistant",
    content: [{ type: "text", text }],
    text,
    internal: false,
    source,
  });
  deps.onWebMessage?.(row);
}

/**
 * Posts a message to a delivery target (spec "Delivery targets": where it goes, where it is stored).
 * What is posted comes from outside (a webhook's payload, a model's answer that repeats one, an
 * error's text): every secret of the runtime in it is `[redacted]` before it is stored in a
 * thread, which everyone who may read the agent's threads reads, or posted to team chat.
 */
export async function deliver(
  deps: DeliveryDeps,
  target: DeliveryTarget,
  posted: string,
  source: string,
): Promise<DeliveryReport> {
  const text = deps.secrets ? redactCredentials(posted, deps.secrets()) : posted;
  const destination = deps.teamChat && target !== "Chat" ? await selectTeamChatDestination(deps.teamChat) : null;
  if (target === "Team chat") {
    if (!destination || !deps.teamChat) {
      deps.logger.warn({ source }, "no team-chat direct message or channel is linked; delivering to the web chat");
      await postToWeb(deps, text, source);
      return { web: true, teamChat: null };
    }
    const thread = await teamChatThread(deps.db, destination.id);
    await deps.messages.append({
      threadId: thread.id,
      role: "assistant",
      content: [{ type: "text", text }],
      text,
      internal: false,
      source,
    });
    await deps.teamChat.post(destination, text);
    return { web: false, teamChat: destination.id };
  }
  await postToWeb(deps, text, source);
  if (target === "All channels" && destination && deps.teamChat) {
    await deps.teamChat.post(destination, text);
    return { web: true, teamChat: destination.id };
  }
  return { web: true, teamChat: null };
}
