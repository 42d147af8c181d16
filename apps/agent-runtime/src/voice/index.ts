import type { Logger } from "pino";
import type { RuntimeConfig } from "../config.ts";
import type { ToolRegistry } from "../tools/types.ts";
import { probeVoice, type VoiceAvailability } from "./availability.ts";
import { RealtimeMeetingCall } from "./call.ts";
import { MeetingBrowser } from "./meeting-session.ts";
import { type CallReportDeps, reportCall } from "./summary.ts";
import { voiceTools } from "./tools.ts";
import type { MeetingController } from "./types.ts";

export type { VoiceAvailability } from "./availability.ts";
export type { MeetingController, MeetingStatus } from "./types.ts";

export interface VoiceOptions {
  /** Meeting service hosts accepted in links (default: the production service). */
  meetingHosts?: readonly string[];
  /** Replaces the meeting controller. */
  meetings?: MeetingController;
}

/** Probes availability and, when available, registers the voice tools. */
export async function setupVoice(
  config: RuntimeConfig,
  tools: ToolRegistry,
  logger: Logger,
  options: VoiceOptions = {},
  report?: Omit<CallReportDeps, "logger">,
): Promise<{ availability: VoiceAvailability; meetings: MeetingController | undefined }> {
  const availability = await probeVoice(config);
  if (availability.status === "off") {
    if (config.env.VOICE_API_KEY) logger.warn({ reason: availability.reason }, "voice meetings are off");
    return { availability, meetings: undefined };
  }
  const meetings =
    options.meetings ??
    new MeetingBrowser({
      browserPath: config.env.VOICE_BROWSER_PATH,
      dataDir: config.dataDir,
      account: { email: config.env.MEETING_BOT_EMAIL ?? "", password: config.env.MEETING_BOT_PASSWORD },
      admissionTimeoutMs: config.env.MEETING_ADMISSION_TIMEOUT_SECONDS * 1000,
      meetingCapMs: config.env.MEETING_TIMEOUT_MINUTES * 60_000,
      logger,
      ...(report
        ? {
            onEnded: (status, record, threadId) => {
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
