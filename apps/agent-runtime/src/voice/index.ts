import type { Logger } from "pino";
import type { RuntimeConfig } from "../config.ts";
import type { ToolRegistry } from "../tools/types.ts";
import type { UsageStore } from "../usage/store.ts";
import { voiceSessionRecord } from "../usage/voice.ts";
import { probeVoice, type VoiceAvailability } from "./availability.ts";
import type { CallRecord } from "./call.ts";
import { RealtimeMeetingCall } from "./call.ts";
import { MeetingBrowser } from "./meeting-session.ts";
import { DEFAULT_REALTIME_MODEL, DEFAULT_TRANSCRIPTION_MODEL } from "./realtime.ts";
import { type CallReportDeps, reportCall } from "./summary.ts";
import { voiceTools } from "./tools.ts";
import type { MeetingController, MeetingStatus } from "./types.ts";

export type { VoiceAvailability } from "./availability.ts";
export type { MeetingController, MeetingStatus } from "./types.ts";

export interface VoiceOptions {
  /** Meeting service hosts accepted in links (default: the production service). */
  meetingHosts?: readonly string[];
  /** Origins whose sign-in form gets the meeting account (default: the production identity provider). */
  signInOrigins?: readonly string[];
  /** Replaces the meeting controller. */
  meetings?: MeetingController;
  /** How often a call's usage so far is written (default 10 s; tests shorten it). */
  progressMs?: number;
}

/** Probes availability and, when available, registers the voice tools. */
export async function setupVoice(
  config: RuntimeConfig,
  tools: ToolRegistry,
  logger: Logger,
  options: VoiceOptions = {},
  report?: Omit<CallReportDeps, "logger"> & { usage?: UsageStore },
): Promise<{ availability: VoiceAvailability; meetings: MeetingController | undefined }> {
  const availability = await probeVoice(config);
  if (availability.status === "off") {
    if (config.env.VOICE_API_KEY) logger.warn({ reason: availability.reason }, "voice meetings are off");
    return { availability, meetings: undefined };
  }
  if (!availability.sandboxed) {
    logger.warn({ reason: availability.unsandboxedReason }, "the meeting browser runs without Chromium's sandbox");
  }
  const models = {
    realtime: config.env.VOICE_REALTIME_MODEL ?? DEFAULT_REALTIME_MODEL,
    transcription: config.env.VOICE_TRANSCRIPTION_MODEL ?? DEFAULT_TRANSCRIPTION_MODEL,
  };
  // Only admitted calls use audio: the waiting room and a denial are not sessions.
  const saveUsage = (status: MeetingStatus, record: CallRecord | undefined, threadId: string | undefined) => {
    if (!report?.usage || !status.admittedAt) return;
    try {
      report.usage.saveVoiceSession(voiceSessionRecord(status, record, threadId, models));
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "the meeting's usage could not be written");
    }
  };
  const meetings =
    options.meetings ??
    new MeetingBrowser({
      browserPath: config.env.VOICE_BROWSER_PATH,
      sandboxed: availability.sandboxed,
      dataDir: config.dataDir,
      account: { email: config.env.MEETING_BOT_EMAIL ?? "", password: config.env.MEETING_BOT_PASSWORD },
      ...(options.signInOrigins ? { signInOrigins: options.signInOrigins } : {}),
      admissionTimeoutMs: config.env.MEETING_ADMISSION_TIMEOUT_SECONDS * 1000,
      meetingCapMs: config.env.MEETING_TIMEOUT_MINUTES * 60_000,
      logger,
      ...(options.progressMs ? { progressMs: options.progressMs } : {}),
      onProgress: saveUsage,
      ...(report
        ? {
            onEnded: (status, record, threadId) => {
              // Written first and synchronously: the usage does not wait on the summary.
              saveUsage(status, record, threadId);
              if (!threadId) return;
              reportCall({ ...report, logger }, status, record, threadId).catch((err: Error) =>
                logger.warn({ err: err.message }, "the meeting summary could not be posted"),
              );
            },
          }
        : {}),
      call: () =>
        new RealtimeMeetingCall({
          url: config.env.VOICE_API_URL,
          apiKey: config.env.VOICE_API_KEY as string,
          ...(config.env.VOICE_REALTIME_MODEL ? { model: config.env.VOICE_REALTIME_MODEL } : {}),
          ...(config.env.VOICE_REALTIME_VOICE ? { voice: config.env.VOICE_REALTIME_VOICE } : {}),
          ...(config.env.VOICE_TRANSCRIPTION_MODEL ? { transcriptionModel: config.env.VOICE_TRANSCRIPTION_MODEL } : {}),
          instructions: `You are ${config.env.AGENT_NAME}, in a video meeting. Answer briefly and by voice, only when addressed.`,
          names: [config.env.AGENT_NAME],
          logger,
        }),
    });
  for (const tool of voiceTools({
    config,
    meetings,
    ...(options.meetingHosts ? { meetingHosts: options.meetingHosts } : {}),
  })) {
    tools.register(tool);
  }
  return { availability, meetings };
}
