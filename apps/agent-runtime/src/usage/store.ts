import type {
  RuntimeUsage,
  RuntimeUsageFigures,
  RuntimeUsageGroupBy,
  RuntimeUsageSource,
} from "@agentplane/contracts/runtime";
import { Pricing } from "@agentplane/pricing/prices";
import type Database from "better-sqlite3";
import { nowIso } from "../ids.ts";

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ModelCallRecord extends TokenCounts {
  source: RuntimeUsageSource;
  threadId?: string | undefined;
  runId?: string | undefined;
  provider: string;
  model: string;
}

/** A voice session's figures so far (or final, with `ended`). */
export interface VoiceSessionRecord {
  id: string;
  meetingId: string;
  threadId: string | undefined;
  realtimeModel: string;
  transcriptionModel: string;
  startedAt: string;
  inputAudioSeconds: number;
  outputAudioSeconds: number;
  transcriptionSeconds: number;
  responses: number;
  inputTokens: number;
  outputTokens: number;
  ended?: { at: string; reason: string };
}

/** Why a session still open at start has no end: the process stopped during the call. */
export const INTERRUPTED_REASON = "interrupted: the runtime stopped during the call";

/** Group keys as SQL, per table: fixed texts (never from the request). */
const MODEL_CALL_KEY: Record<RuntimeUsageGroupBy | "total", string> = {
  day: "substr(at, 1, 10)",
  model: "model",
  source: "source",
  total: "'total'",
};
const REALTIME_KEY: Record<RuntimeUsageGroupBy | "total", string> = {
  day: "substr(started_at, 1, 10)",
  model: "realtime_model",
  source: "'voice'",
  total: "'total'",
};

/** The model-call sums of a window (parameters: from, to), grouped by `groupBy`. */
export function modelCallSumsSql(groupBy: RuntimeUsageGroupBy | "total"): string {
  return `select ${MODEL_CALL_KEY[groupBy]} as key, count(*) as calls, sum(input_tokens) as input,
      sum(output_tokens) as output, sum(cache_read_tokens) as cache_read, sum(cache_write_tokens) as cache_write,
      coalesce(sum(cost_micro_usd), 0) as cost, sum(cost_micro_usd is null) as unpriced
    from model_call_usage where at >= ? and at < ? group by 1`;
}

interface ModelCallSums {
  key: string;
  calls: number;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  cost: number;
  unpriced: number;
}
interface VoiceSums {
  key: string;
  sessions: number;
  audio_in: number;
  audio_out: number;
  transcribed: number;
  input: number;
  output: number;
}

const zero = (): RuntimeUsageFigures => ({
  modelCalls: 0,
  voiceSessions: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costMicroUsd: 0,
  costUsd: 0,
  unpriced: 0,
  audioInputMinutes: 0,
  audioOutputMinutes: 0,
  transcriptionMinutes: 0,
});

const minutes = (seconds: number) => Math.round((seconds / 60) * 1000) / 1000;

/**
 * The runtime's usage (docs/decisions/0018-runtime-usage.md) in its own SQLite database: a row per
 * model call, written as the call returns, and a row per voice session, rewritten as the call goes.
 * Writes are synchronous single statements: nothing waits in memory for a later commit.
 */
export class UsageStore {
  readonly #sqlite: Database.Database;
  readonly #pricing: Pricing;
  readonly #insertCall: Database.Statement;
  readonly #upsertSession: Database.Statement;

  constructor(sqlite: Database.Database, pricing: Pricing = new Pricing()) {
    this.#sqlite = sqlite;
    this.#pricing = pricing;
    this.#insertCall = sqlite.prepare(
      `insert into model_call_usage (at, source, thread_id, run_id, provider, model, input_tokens, output_tokens,
         cache_read_tokens, cache_write_tokens, cost_micro_usd)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#upsertSession = sqlite.prepare(
      `insert into voice_session_usage (id, meeting_id, thread_id, realtime_model, transcription_model, started_at,
         updated_at, ended_at, end_reason, input_audio_seconds, output_audio_seconds, transcription_seconds,
         responses, input_tokens, output_tokens)
       values (@id, @meetingId, @threadId, @realtimeModel, @transcriptionModel, @startedAt, @updatedAt, @endedAt,
         @endReason, @inputAudioSeconds, @outputAudioSeconds, @transcriptionSeconds, @responses, @inputTokens,
         @outputTokens)
       on conflict (id) do update set updated_at = excluded.updated_at, ended_at = excluded.ended_at,
         end_reason = excluded.end_reason, input_audio_seconds = excluded.input_audio_seconds,
         output_audio_seconds = excluded.output_audio_seconds, transcription_seconds = excluded.transcription_seconds,
         responses = excluded.responses, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens
       where voice_session_usage.ended_at is null`,
    );
  }

  recordModelCall(call: ModelCallRecord, at: string = nowIso()): void {
    const cost = this.#pricing.cost(call.model, call);
    this.#insertCall.run(
      at,
      call.source,
      call.threadId ?? null,
      call.runId ?? null,
      call.provider,
      call.model,
      call.inputTokens,
      call.outputTokens,
      call.cacheReadTokens,
      call.cacheWriteTokens,
      cost ?? null,
    );
  }

  /** Writes the session's figures so far; once it has ended, later writes are ignored. */
  saveVoiceSession(session: VoiceSessionRecord, at: string = nowIso()): void {
    this.#upsertSession.run({
      id: session.id,
      meetingId: session.meetingId,
      threadId: session.threadId ?? null,
      realtimeModel: session.realtimeModel,
      transcriptionModel: session.transcriptionModel,
      startedAt: session.startedAt,
      updatedAt: at,
      endedAt: session.ended?.at ?? null,
      endReason: session.ended?.reason ?? null,
      inputAudioSeconds: session.inputAudioSeconds,
      outputAudioSeconds: session.outputAudioSeconds,
      transcriptionSeconds: session.transcriptionSeconds,
      responses: session.responses,
      inputTokens: session.inputTokens,
      outputTokens: session.outputTokens,
    });
  }

  /** At start: sessions a stopped process left open end at their last write, with what it held. */
  closeInterrupted(): number {
    return this.#sqlite
      .prepare(
        "update voice_session_usage set ended_at = updated_at, end_reason = ? where ended_at is null returning id",
      )
      .all(INTERRUPTED_REASON).length;
  }

  /** Deletes what is older than `days` days (ended sessions only); 0 keeps everything. */
  prune(days: number, now: Date = new Date()): { modelCalls: number; voiceSessions: number } {
    if (days <= 0) return { modelCalls: 0, voiceSessions: 0 };
    const cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
    const modelCalls = this.#sqlite.prepare("delete from model_call_usage where at < ?").run(cutoff).changes;
    const voiceSessions = this.#sqlite
      .prepare("delete from voice_session_usage where started_at < ? and ended_at is not null")
      .run(cutoff).changes;
    return { modelCalls, voiceSessions };
  }

  /** Totals and groups of [from, to); a voice session counts in the window it started in. */
  summarize(window: { from: Date; to: Date }, groupBy: RuntimeUsageGroupBy): RuntimeUsage {
    const from = window.from.toISOString();
    const to = window.to.toISOString();
    const groups = this.#figures(groupBy, from, to);
    const total = this.#figures("total", from, to).get("total") ?? zero();
    const items = [...groups].map(([key, figures]) => ({ key, ...figures }));
    if (groupBy === "day") items.sort((a, b) => a.key.localeCompare(b.key));
    else items.sort((a, b) => b.costMicroUsd - a.costMicroUsd || a.key.localeCompare(b.key));
    return { from, to, groupBy, total, groups: items };
  }

  #figures(groupBy: RuntimeUsageGroupBy | "total", from: string, to: string): Map<string, RuntimeUsageFigures> {
    const out = new Map<string, RuntimeUsageFigures>();
    const at = (key: string) => {
      let figures = out.get(key);
      if (!figures) {
        figures = zero();
        out.set(key, figures);
      }
      return figures;
    };
    const calls = this.#sqlite.prepare(modelCallSumsSql(groupBy)).all(from, to) as ModelCallSums[];
    for (const row of calls) {
      const f = at(row.key);
      f.modelCalls += row.calls;
      f.inputTokens += row.input;
      f.outputTokens += row.output;
      f.cacheReadTokens += row.cache_read;
      f.cacheWriteTokens += row.cache_write;
      f.costMicroUsd += row.cost;
      f.unpriced += row.unpriced;
    }
    // By model, the transcription minutes count under the transcription model, the rest under
    // the realtime model; otherwise a session's figures stay together.
    const byModel = groupBy === "model";
    const sessions = this.#sqlite
      .prepare(
        `select ${REALTIME_KEY[groupBy]} as key, count(*) as sessions, sum(input_audio_seconds) as audio_in,
           sum(output_audio_seconds) as audio_out, sum(transcription_seconds) as transcribed,
           sum(input_tokens) as input, sum(output_tokens) as output
         from voice_session_usage where started_at >= ? and started_at < ? group by 1`,
      )
      .all(from, to) as VoiceSums[];
    for (const row of sessions) {
      const f = at(row.key);
      f.voiceSessions += row.sessions;
      f.unpriced += row.sessions;
      f.inputTokens += row.input;
      f.outputTokens += row.output;
      f.audioInputMinutes += row.audio_in;
      f.audioOutputMinutes += row.audio_out;
      if (!byModel) f.transcriptionMinutes += row.transcribed;
    }
    if (byModel) {
      const transcribed = this.#sqlite
        .prepare(
          `select transcription_model as key, count(*) as sessions, sum(transcription_seconds) as transcribed
           from voice_session_usage where started_at >= ? and started_at < ? group by 1`,
        )
        .all(from, to) as Array<Pick<VoiceSums, "key" | "sessions" | "transcribed">>;
      for (const row of transcribed) {
        const f = at(row.key);
        // A model that were both realtime and transcriber would count each session once.
        if (!sessions.some((s) => s.key === row.key)) {
          f.voiceSessions += row.sessions;
          f.unpriced += row.sessions;
        }
        f.transcriptionMinutes += row.transcribed;
      }
    }
    for (const f of out.values()) {
      // Seconds were summed into the minute fields above; converted once here.
      f.audioInputMinutes = minutes(f.audioInputMinutes);
      f.audioOutputMinutes = minutes(f.audioOutputMinutes);
      f.transcriptionMinutes = minutes(f.transcriptionMinutes);
      f.costUsd = f.costMicroUsd / 1_000_000;
    }
    return out;
  }
}
