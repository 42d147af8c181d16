import { z } from "@hono/zod-openapi";
import { defineRuntimeRoute } from "./define-route.ts";

export const TEAM_CHAT_STATES = ["off", "connecting", "connected", "disabled"] as const;

/**
 * The team-chat integration as the channels view shows it. `off`: no CHAT_BOT_TOKEN; `disabled`:
 * configured but refused (app id mismatch, invalid token), with the reason in `detail`.
 */
export const TeamChatState = z
  .object({
    state: z.enum(TEAM_CHAT_STATES),
    detail: z.string().nullable(),
    mode: z.enum(["personal", "team"]),
    /** The app id resolved from the bot token (auth.test, then bots.info); null before boot. */
    appId: z.string().nullable(),
    /** The bot's own user id in the workspace; null before boot. */
    botUserId: z.string().nullable(),
    owner: z.object({
      /** The owner's chat user id; null while unpaired. */
      id: z.string().nullable(),
      /** `env`: CHAT_OWNER_ID; `paired`: claimed with the one-time code (resettable). */
      source: z.enum(["env", "paired"]).nullable(),
      /** A one-time pairing code is waiting to be sent by DM (it is in the runtime's log, never here). */
      pairingPending: z.boolean(),
    }),
  })
  .openapi("TeamChatState");

export const TeamChatChannel = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    /** When the channel was linked (ISO 8601); the oldest is the delivery fallback in team mode. */
    linkedAt: z.string(),
    /** The agent's main channel: where `All channels` and `Team chat` deliveries go in team mode. */
    main: z.boolean(),
  })
  .openapi("TeamChatChannel");

export const TeamChatChannelList = z.object({ data: z.array(TeamChatChannel) }).openapi("TeamChatChannelList");

/** `linked: true` links the channel (if not yet), `false` unlinks it; `main` flags or unflags it. */
export const UpdateTeamChatChannelBody = z
  .object({ linked: z.boolean().optional(), main: z.boolean().optional() })
  .strict()
  .openapi("UpdateTeamChatChannel");

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const channelIdParam = z.object({
  channelId: z
    .string()
    .regex(/^[A-Z0-9]{2,32}$/, "a chat channel id such as C0123ABCD")
    .openapi({ param: { name: "channelId", in: "path" }, example: "C0123ABCD" }),
});

export const getTeamChatRoute = defineRuntimeRoute(
  { errors: [] },
  {
    method: "get",
    path: "/agents/team-chat",
    operationId: "getTeamChat",
    responses: { 200: json(TeamChatState, "The team-chat integration's state, mode and owner") },
  },
);

export const resetTeamChatOwnerRoute = defineRuntimeRoute(
  { errors: [409] },
  {
    method: "delete",
    path: "/agents/team-chat/owner",
    operationId: "resetTeamChatOwner",
    description:
      "Forgets the paired owner; a new one-time pairing code is written to the runtime's log. An owner set by CHAT_OWNER_ID cannot be reset here (409).",
    responses: { 200: json(TeamChatState, "The state after the reset") },
  },
);

export const listTeamChatChannelsRoute = defineRuntimeRoute(
  { errors: [] },
  {
    method: "get",
    path: "/agents/team-chat/channels",
    operationId: "listTeamChatChannels",
    responses: { 200: json(TeamChatChannelList, "Linked channels, oldest link first") },
  },
);

export const updateTeamChatChannelRoute = defineRuntimeRoute(
  { errors: [400, 404, 409] },
  {
    method: "patch",
    path: "/agents/team-chat/channels/{channelId}",
    operationId: "updateTeamChatChannel",
    description:
      "Links (`linked: true`), unlinks (`linked: false`) or flags as main (`main: true`, which unflags any other) a channel. A channel that is not linked answers 404 unless the body links it. With team chat configured, linking a channel its allow-list refuses answers 409 and links nothing: one CHAT_ALLOWED_CHANNELS leaves out, or, with it unset, one externally shared (Slack Connect) when the chat service says so; the `detail` names the reason. Unlinking is always allowed.",
    request: {
      params: channelIdParam,
      body: { required: true, content: { "application/json": { schema: UpdateTeamChatChannelBody } } },
    },
    responses: {
      200: json(TeamChatChannelList, "Every linked channel after the change"),
    },
  },
);

export type TeamChatState = z.infer<typeof TeamChatState>;
export type TeamChatChannel = z.infer<typeof TeamChatChannel>;
