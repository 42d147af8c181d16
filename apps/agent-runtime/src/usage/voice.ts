import type { CallRecord } from "../voice/call.ts";
import type { MeetingStatus } from "../voice/types.ts";
import type { VoiceSessionRecord } from "./store.ts";

/** The usage record of a voice session from its status and its call's record (so far or final). */
export function voiceSessionRecord(
  status: MeetingStatus,
  record: CallRecord | undefined,
  threadId: string | undefined,
  models: { realtime: string; transcription: string },
): VoiceSessionRecord {
  const input = record?.inputAudioSeconds ?? 0;
  const ended = status.endedAt ? { at: status.endedAt, reason: status.reason ?? status.state } : undefined;
  return {
    id: status.id,
    meetingId: new URL(status.url).pathname.replace(/^\//, ""),
    threadId,
    realtimeModel: models.realtime,
    transcriptionModel: models.transcription,
    // The session starts at admission: the waiting room uses no audio.
    startedAt: status.admittedAt ?? status.startedAt,
    inputAudioSeconds: input,
    outputAudioSeconds: record?.outputAudioSeconds ?? 0,
    // The transcriber hears everything streamed, addressed or not.
    transcriptionSeconds: input,
    responses: record?.usage.responses ?? 0,
    inputTokens: record?.usage.inputTokens ?? 0,
    outputTokens: record?.usage.outputTokens ?? 0,
    ...(ended ? { ended } : {}),
  };
}
