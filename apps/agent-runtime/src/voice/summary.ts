import type { Logger } from "pino";
import type { ProductTelemetry } from "../observability/product-events.ts";
import type { MessageWriter } from "../services/message-writer.ts";
import type { MessageRow } from "../services/threads.ts";
import type { CallRecord } from "./call.ts";
import type { MeetingStatus } from "./types.ts";

/** Audio minutes of one call, as the vendor bills them. */
export interface CallUsage {
  realtimeInputMinutes: number;
  realtimeOutputMinutes: number;
  /** The transcriber hears everything sent, whether or not the agent answers. */
  transcriptionMinutes: number;
  responses: number;
  inputTokens: number;
  outputTokens: number;
}

export function callUsage(record: CallRecord | undefined): CallUsage {
  const input = (record?.inputAudioSeconds ?? 0) / 60;
  return {
    realtimeInputMinutes: input,
    realtimeOutputMinutes: (record?.outputAudioSeconds ?? 0) / 60,
    transcriptionMinutes: input,
    responses: record?.usage.responses ?? 0,
    inputTokens: record?.usage.inputTokens ?? 0,
    outputTokens: record?.usage.outputTokens ?? 0,
  };
}

const minutes = (m: number) => `${m.toFixed(2)} min`;

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/** Characters of one utterance in the summary; the rest is cut with an ellipsis. */
export const SUMMARY_UTTERANCE_LIMIT = 2000;

/**
 * One utterance as one line of the summary. What was said is anyone's in the meeting (and what
 * the agent answered follows from it): a transcript with line breaks in it could otherwise write
 * lines of its own (`The agent said:`, a usage line) into a message the model later reads as the
 * runtime's own record of the call.
 */
function utterance(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > SUMMARY_UTTERANCE_LIMIT ? `${line.slice(0, SUMMARY_UTTERANCE_LIMIT)}…` : line;
}

/** The message posted to the thread that asked for the meeting. */
export function callSummary(status: MeetingStatus, record: CallRecord | undefined): string {
  const lines: string[] = [];
  const ended = Date.parse(status.endedAt ?? new Date().toISOString());
  const inCall = status.admittedAt ? ended - Date.parse(status.admittedAt) : 0;
  lines.push(`Meeting ${status.url} (as ${status.name}): ${status.state}, ${status.reason ?? "ended"}.`);
  lines.push(status.admittedAt ? `In the call for ${duration(inCall)}.` : "The agent was not admitted to the call.");
  const said = record?.transcripts ?? [];
  const toAgent = said.filter((t) => t.addressed);
  if (toAgent.length > 0) {
    lines.push("", "Said to the agent:");
    for (const t of toAgent) lines.push(`- ${utterance(t.text)}`);
  }
  const answers = record?.answers ?? [];
  if (answers.length > 0) {
    lines.push("", "The agent said:");
    for (const a of answers) lines.push(`- ${utterance(a)}`);
  }
  if (record) {
    const usage = callUsage(record);
    lines.push(
      "",
      `Heard ${said.length} utterance(s), answered ${usage.responses} time(s). Audio: ${minutes(usage.realtimeInputMinutes)} in, ${minutes(usage.realtimeOutputMinutes)} out, ${minutes(usage.transcriptionMinutes)} transcribed.`,
    );
  }
  return lines.join("\n");
}

export interface CallReportDeps {
  messages: MessageWriter;
  onWebMessage?: (message: MessageRow) => void;
  telemetry: ProductTelemetry;
  logger: Logger;
}

/** After a call: the summary in the asking thread, the usage in the log and product telemetry. */
export async function reportCall(
  deps: CallReportDeps,
  status: MeetingStatus,
  record: CallRecord | undefined,
  threadId: string,
): Promise<void> {
  const usage = callUsage(record);
  deps.logger.info({ state: status.state, reason: status.reason, usage }, "meeting ended");
  const inCallMs = status.admittedAt && status.endedAt ? Date.parse(status.endedAt) - Date.parse(status.admittedAt) : 0;
  deps.telemetry.emit("meeting.ended", {
    "meeting.state": status.state as "ended" | "denied" | "admission-timeout",
    "meeting.admitted": status.admittedAt !== undefined,
    "meeting.duration_ms": inCallMs,
    "meeting.responses": usage.responses,
    "realtime.input_audio_ms": usage.realtimeInputMinutes * 60_000,
    "realtime.output_audio_ms": usage.realtimeOutputMinutes * 60_000,
    "transcription.audio_ms": usage.transcriptionMinutes * 60_000,
  });
  const text = callSummary(status, record);
  const row = await deps.messages.append({
    threadId,
    role: "assistant",
    content: [{ type: "text", text }],
    text,
    internal: false,
    source: "meeting",
  });
  deps.onWebMessage?.(row);
}
