import type { DeliveryTarget, WebhookRunStatus } from "@agentplane/contracts/runtime";
import type { Generated } from "kysely";

export interface WebhookSubscriptionTable {
  name: string;
  description: string;
  events: string;
  deliver_to: DeliveryTarget;
  deliver_only: number;
  prompt: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface WebhookRunTable {
  /** Arrival order: runs of one subscription execute in this order. */
  seq: Generated<number>;
  id: string;
  subscription: string;
  event: string;
  payload: string;
  /** The subscription's prompt and target when the run was accepted. */
  prompt: string;
  deliver_to: DeliveryTarget;
  status: WebhookRunStatus;
  attempts: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}
