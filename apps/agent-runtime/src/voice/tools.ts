import { z } from "zod";
import type { RuntimeConfig } from "../config.ts";
import { type AgentTool, toolError, toolResult } from "../tools/types.ts";
import { MEETING_HOSTS, parseMeetingLink } from "./meeting-link.ts";
import { MeetingBusyError, type MeetingController } from "./types.ts";

const JoinInput = z.object({ url: z.string().min(1), name: z.string().trim().min(1).max(80).optional() });

export const ANONYMOUS_REFUSAL =
  "MEETING_BOT_EMAIL is not set: the meeting service auto-denies automated anonymous guests, so the agent does not join without a signed-in account. Ask the operator to set MEETING_BOT_EMAIL and MEETING_BOT_PASSWORD.";

export interface VoiceToolOptions {
  config: RuntimeConfig;
  meetings: MeetingController;
  /** Meeting service hosts accepted in links (tests add the local stand-in). */
  meetingHosts?: readonly string[];
}

/** `join_meeting`, `leave_meeting` and `meeting_status`; offered only when voice is available. */
export function voiceTools({ config, meetings, meetingHosts = MEETING_HOSTS }: VoiceToolOptions): AgentTool[] {
  const join: AgentTool = {
    name: "join_meeting",
    // It signs in as the owner's meeting account and spends realtime minutes.
    actsForOwner: true,
    description:
      "Join a video meeting by its link, signed in as the agent's meeting account. The agent listens, answers by voice when addressed by name, and leaves when the meeting ends or the time cap is reached. One meeting at a time.",
    inputSchema: {
      type: "object",
      properties: {
        url: { type: "string", description: "The meeting link, e.g. https://meet.google.com/abc-defg-hij" },
        name: { type: "string", description: "Display name in the meeting (default: the agent's name)" },
      },
      required: ["url"],
    },
    async handler(input, context) {
      const parsed = JoinInput.safeParse(input);
      if (!parsed.success) return toolError("join_meeting takes {url, name?}: url is required");
      if (!config.env.MEETING_BOT_EMAIL) return toolError(ANONYMOUS_REFUSAL);
      const url = parseMeetingLink(parsed.data.url, meetingHosts);
      if (!(url instanceof URL)) return toolError(url.error);
      try {
        const status = await meetings.join({
          url,
          name: parsed.data.name ?? config.env.AGENT_NAME,
          threadId: context.threadId,
        });
        return toolResult(status);
      } catch (err) {
        if (err instanceof MeetingBusyError) return toolError(err.message);
        throw err;
      }
    },
  };
  const leave: AgentTool = {
    name: "leave_meeting",
    actsForOwner: true,
    description: "Leave the current meeting.",
    inputSchema: { type: "object", properties: {} },
    async handler() {
      const status = await meetings.leave();
      return status ? toolResult(status) : toolError("Not in a meeting");
    },
  };
  const status: AgentTool = {
    name: "meeting_status",
    description: "The current or last meeting: its link, state (waiting, in-call, ended...) and why it ended.",
    inputSchema: { type: "object", properties: {} },
    handler() {
      return toolResult(meetings.status() ?? { state: "idle" });
    },
  };
  return [join, leave, status];
}
