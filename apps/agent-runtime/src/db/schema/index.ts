import type { AgentTable, HeartbeatRunTable, SettingTable } from "./agent.ts";
import type { MessageTable, ThreadContextTable, ThreadTable } from "./chat.ts";
import type { ScheduleRunTable, ScheduleTable } from "./schedules.ts";
import type { WebhookRunTable, WebhookSubscriptionTable } from "./webhooks.ts";

export interface RuntimeDatabase {
  agent: AgentTable;
  setting: SettingTable;
  heartbeat_run: HeartbeatRunTable;
  thread: ThreadTable;
  message: MessageTable;
  thread_context: ThreadContextTable;
  webhook_subscription: WebhookSubscriptionTable;
  webhook_run: WebhookRunTable;
  schedule: ScheduleTable;
  schedule_run: ScheduleRunTable;
}

export type {
  AgentTable,
  HeartbeatRunTable,
  MessageTable,
  ScheduleRunTable,
  ScheduleTable,
  SettingTable,
  ThreadContextTable,
  ThreadTable,
  WebhookRunTable,
  WebhookSubscriptionTable,
};
