import type { DeliveryTarget } from "@agentplane/contracts/runtime";
import type { Generated } from "kysely";

export interface ScheduleTable {
  id: string;
  name: string;
  /** Exactly one of cron, at, every_seconds is set. */
  cron: string | null;
  at: string | null;
  every_seconds: number | null;
  timezone: string | null;
  prompt: string;
  deliver_to: DeliveryTarget;
  active: number;
  /** ISO 8601 (UTC) of the next due run; null when inactive or a one-shot already ran. */
  next_run_at: string | null;
  last_run_at: string | null;
  consecutive_failures: number;
  paused_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScheduleRunTable {
  seq: Generated<number>;
  id: string;
  schedule_id: string;
  trigger: "schedule" | "manual" | "missed";
  status: "running" | "succeeded" | "failed" | "skipped";
  scheduled_for: string;
  started_at: string | null;
  finished_at: string | null;
  result: string | null;
  error: string | null;
}
