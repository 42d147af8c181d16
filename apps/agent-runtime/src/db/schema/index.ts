import type { AgentTable, SettingTable } from "./agent.ts";
import type { MessageTable, ThreadTable } from "./chat.ts";
import type { WebhookRunTable, WebhookSubscriptionTable } from "./webhooks.ts";

export interface RuntimeDatabase {
  agent: AgentTable;
  setting: SettingTable;
  thread: ThreadTable;
  message: MessageTable;
  webhook_subscription: WebhookSubscriptionTable;
  webhook_run: WebhookRunTable;
}

export type { AgentTable, MessageTable, SettingTable, ThreadTable, WebhookRunTable, WebhookSubscriptionTable };
