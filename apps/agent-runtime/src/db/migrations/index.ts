import type { Migration } from "kysely/migration";
import * as initial from "./0001-initial.ts";
import * as threadContext from "./0002-thread-context.ts";
import * as heartbeat from "./0003-heartbeat.ts";
import * as schedules from "./0004-schedules.ts";
import * as memory from "./0005-memory.ts";
import * as teamChat from "./0006-team-chat.ts";
import * as webhookVerification from "./0007-webhook-verification.ts";
import * as sealedWebhookSecrets from "./0008-sealed-webhook-secrets.ts";
import * as usage from "./0009-usage.ts";
import * as sharedNotes from "./0010-shared-notes.ts";

/** Listed explicitly, in order: a folder scan would not survive bundling. */
export const migrations: Record<string, Migration> = {
  "0001-initial": initial,
  "0002-thread-context": threadContext,
  "0003-heartbeat": heartbeat,
  "0004-schedules": schedules,
  "0005-memory": memory,
  "0006-team-chat": teamChat,
  "0007-webhook-verification": webhookVerification,
  "0008-sealed-webhook-secrets": sealedWebhookSecrets,
  "0009-usage": usage,
  "0010-shared-notes": sharedNotes,
};
