import type { RuntimeUsageSource } from "@agentplane/contracts/runtime";
import type { Generated } from "kysely";

/** One model call that returned: what it used and what it cost. */
export interface ModelCallUsageTable {
  seq: Generated<number>;
  /** ISO 8601 (UTC) of the answer. */
  at: string;
  source: RuntimeUsageSource;
  thread_id: string | null;
  /** The webhook, schedule or heartbeat run the call belongs to. */
  run_id: string | null;
  provider: string;
  /** The model id asked for (the override or the provider's default). */
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Micro-USD at the bundled list prices; null when the model has no known price. */
  cost_micro_usd: number | null;
}

/**
 * One voice session (an admitted meeting call): its audio and the realtime model's tokens. Never
 * priced: audio and transcription prices are not in the price table.
 */
export interface VoiceSessionUsageTable {
  id: string;
  /** The meeting code (`abc-defg-hij`). */
  meeting_id: string;
  /** The thread that asked for the meeting. */
  thread_id: string | null;
  realtime_model: string;
  transcription_model: string;
  started_at: string;
  updated_at: string;
  /** Null while the call goes on; set at its end, or by the next start for a call a crash cut. */
  ended_at: string | null;
  end_reason: string | null;
  input_audio_seconds: number;
  output_audio_seconds: number;
  transcription_seconds: number;
  responses: number;
  input_tokens: number;
  output_tokens: number;
}
