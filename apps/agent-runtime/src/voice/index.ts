import type { Logger } from "pino";
import type { RuntimeConfig } from "../config.ts";
import type { ToolRegistry } from "../tools/types.ts";
import { probeVoice, type VoiceAvailability } from "./availability.ts";
import { voiceTools } from "./tools.ts";
import type { MeetingController, MeetingStatus } from "./types.ts";

export type { VoiceAvailability } from "./availability.ts";
export type { MeetingController, MeetingStatus } from "./types.ts";

export interface VoiceOptions {
  /** Meeting service hosts accepted in links (default: the production service). */
  meetingHosts?: readonly string[];
  /** Replaces the meeting controller. */
  meetings?: MeetingController;
}

/**
 * The meeting browser is not part of this build yet: joining says so instead of pretending. The
 * tools, link checks and availability are real so that configuration problems surface now.
 */
class UnbuiltMeetings implements MeetingController {
  join(): Promise<MeetingStatus> {
    return Promise.reject(new Error("joining meetings is not available in this version of the runtime yet"));
  }
  leave(): Promise<MeetingStatus | undefined> {
    return Promise.resolve(undefined);
  }
  status(): MeetingStatus | undefined {
    return undefined;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Probes availability and, when available, registers the voice tools. */
export async function setupVoice(
  config: RuntimeConfig,
  tools: ToolRegistry,
  logger: Logger,
  options: VoiceOptions = {},
): Promise<{ availability: VoiceAvailability; meetings: MeetingController | undefined }> {
  const availability = await probeVoice(config);
  if (availability.status === "off") {
    if (config.env.VOICE_API_KEY) logger.warn({ reason: availability.reason }, "voice meetings are off");
    return { availability, meetings: undefined };
  }
  const meetings = options.meetings ?? new UnbuiltMeetings();
  for (const tool of voiceTools({
    config,
    meetings,
    ...(options.meetingHosts ? { meetingHosts: options.meetingHosts } : {}),
  })) {
    tools.register(tool);
  }
  return { availability, meetings };
}
