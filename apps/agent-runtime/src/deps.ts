import type { Logger } from "pino";
import type { DeliveryDeps } from "./chat/deliver.ts";
import type { TeamChatAdapter } from "./chat/team-chat.ts";
import type { RuntimeConfig } from "./config.ts";
import type { RuntimeDb } from "./db/database.ts";
import type { ModelClient } from "./models/provider.ts";
import type { MessageRow } from "./services/threads.ts";
import type { WebhookRegistry } from "./webhooks/registry.ts";
import type { WebhookRunQueue } from "./webhooks/run-queue.ts";

/** Everything the HTTP app works with; built by createRuntime, passed in (no module state). */
export interface RuntimeDeps {
  config: RuntimeConfig;
  database: RuntimeDb;
  model: ModelClient;
  teamChat: TeamChatAdapter | null;
  logger: Logger;
  registry: WebhookRegistry;
  runs: WebhookRunQueue;
  /** Live listeners of the web chat: every message stored in a web thread outside a turn stream. */
  onWebMessage?: (message: MessageRow) => void;
}

export function deliveryDeps(deps: RuntimeDeps): DeliveryDeps {
  return {
    db: deps.database.db,
    teamChat: deps.teamChat,
    logger: deps.logger,
    ...(deps.onWebMessage ? { onWebMessage: deps.onWebMessage } : {}),
  };
}
