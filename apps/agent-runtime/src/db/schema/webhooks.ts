import type { DeliveryTarget, VerificationKind, WebhookRunStatus } from "@agentplane/contracts/runtime";
import type { Generated } from "kysely";

export interface WebhookSubscriptionTable {
  name: string;
  description: string;
  events: string;
  deliver_to: DeliveryTarget;
  deliver_only: number;
  prompt: string;
  active: number;
  verification_kind: VerificationKind;
  /**
   * Sealed with the runtime's secret key (AES-256-GCM, `src/secrets/secret-box.ts`): the HMAC
   * kinds need the secret itself, so it is encrypted, not hashed. Never returned by the API.
   */
  verification_secret: string | null;
  /** 1 once sealed; rows written before migration 0008 hold 0 until the start seals them. */
  verification_secret_sealed: number;
  verification_signature_header: string;
  verification_timestamp_header: string;
  verification_tolerance_seconds: number;
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
