import type { RuntimeDeps } from "../deps.ts";
import { registerGetAgentProfile } from "./agent/get-profile.ts";
import { registerUpdateAgentModels } from "./agent/update-models.ts";
import { registerUpdateAgentVerbose } from "./agent/update-verbose.ts";
import { registerGetHeartbeatSettings } from "./heartbeat/get.ts";
import { registerDeleteMemoryNote } from "./memory/delete.ts";
import { registerListMemoryNotes } from "./memory/list.ts";
import { registerUpdateMemoryNote } from "./memory/update.ts";
import { registerCreateSchedule } from "./schedules/create.ts";
import { registerDeleteSchedule } from "./schedules/delete.ts";
import { registerGetSchedule } from "./schedules/get.ts";
import { registerListSchedules } from "./schedules/list.ts";
import { registerListScheduleRuns } from "./schedules/list-runs.ts";
import { registerRunSchedule } from "./schedules/run.ts";
import { registerUpdateSchedule } from "./schedules/update.ts";
import { registerGetTeamChat } from "./team-chat/get.ts";
import { registerListTeamChatChannels } from "./team-chat/list-channels.ts";
import { registerResetTeamChatOwner } from "./team-chat/reset-owner.ts";
import { registerUpdateTeamChatChannel } from "./team-chat/update-channel.ts";
import { registerCreateThread } from "./threads/create.ts";
import { registerFollowThread } from "./threads/follow.ts";
import { registerListThreads } from "./threads/list.ts";
import { registerListThreadMessages } from "./threads/list-messages.ts";
import { registerPostThreadMessage } from "./threads/post-message.ts";
import { registerStopThreadTurn } from "./threads/stop.ts";
import type { RuntimeApp } from "./types.ts";
import { registerGetRuntimeUsage } from "./usage/get.ts";
import { registerCreateWebhookSubscription } from "./webhook-subscriptions/create.ts";
import { registerDeleteWebhookSubscription } from "./webhook-subscriptions/delete.ts";
import { registerGetWebhookSubscription } from "./webhook-subscriptions/get.ts";
import { registerListWebhookRuns } from "./webhook-subscriptions/list-runs.ts";
import { registerUpdateWebhookSubscription } from "./webhook-subscriptions/update.ts";
import { registerGetWebhookReceiver } from "./webhooks/get-receiver.ts";
import { registerReceiveWebhook } from "./webhooks/receive.ts";
import { registerSetWebhookReceiverEnabled } from "./webhooks/set-receiver-enabled.ts";

const REGISTRATIONS: ((app: RuntimeApp, deps: RuntimeDeps) => void)[] = [
  registerGetAgentProfile,
  registerUpdateAgentVerbose,
  registerUpdateAgentModels,

  registerListThreads,
  registerCreateThread,
  registerListThreadMessages,
  registerPostThreadMessage,
  registerFollowThread,
  registerStopThreadTurn,

  registerGetWebhookReceiver,
  registerSetWebhookReceiverEnabled,
  registerReceiveWebhook,
  registerCreateWebhookSubscription,
  registerGetWebhookSubscription,
  registerUpdateWebhookSubscription,
  registerDeleteWebhookSubscription,
  registerListWebhookRuns,

  registerListSchedules,
  registerCreateSchedule,
  registerGetSchedule,
  registerUpdateSchedule,
  registerDeleteSchedule,
  registerRunSchedule,
  registerListScheduleRuns,

  registerGetTeamChat,
  registerResetTeamChatOwner,
  registerListTeamChatChannels,
  registerUpdateTeamChatChannel,

  registerListMemoryNotes,
  registerUpdateMemoryNote,
  registerDeleteMemoryNote,
  registerGetHeartbeatSettings,
  registerGetRuntimeUsage,
];

/** Every operation of the runtime's API, one file each. */
export function registerRoutes(app: RuntimeApp, deps: RuntimeDeps): void {
  for (const register of REGISTRATIONS) register(app, deps);
}
