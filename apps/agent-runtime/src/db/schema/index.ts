import type { AgentTable, HeartbeatRunTable, SettingTable } from "./agent.ts";
import type { MessageTable, ThreadContextTable, ThreadTable } from "./chat.ts";
import type { ScheduleRunTable, ScheduleTable } from "./schedules.ts";
import type { TeamChatChannelTable, TeamChatDeliveryTable, TeamChatEventTable } from "./team-chat.ts";
import type { ModelCallUsageTable, VoiceSessionUsageTable } from "./usage.ts";
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
  team_chat_channel: TeamChatChannelTable;
  team_chat_event: TeamChatEventTable;
  team_chat_delivery: TeamChatDeliveryTable;
  model_call_usage: ModelCallUsageTable;
  voice_session_usage: VoiceSessionUsageTable;
}

export type {
  AgentTable,
  HeartbeatRunTable,
  MessageTable,
  ModelCallUsageTable,
  ScheduleRunTable,
  ScheduleTable,
  SettingTable,
  TeamChatChannelTable,
  TeamChatDeliveryTable,
  TeamChatEventTable,
  ThreadContextTable,
  ThreadTable,
  VoiceSessionUsageTable,
  WebhookRunTable,
  WebhookSubscriptionTable,
};
