import { updateTeamChatChannelRoute } from "@agentplane/contracts/runtime";
import { listChannels, toTeamChatChannel, updateChannel } from "../../chat/store.ts";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateTeamChatChannel(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateTeamChatChannelRoute, async (c) => {
    const { channelId } = c.req.valid("param");
    const change = c.req.valid("json");
    // The name is looked up only when linking; a failed lookup links the channel without one.
    const name = change.linked === true ? await deps.teamChat?.channelName?.(channelId).catch(() => null) : null;
    await updateChannel(deps.database.db, channelId, change, name ?? null);
    return c.json({ data: (await listChannels(deps.database.db)).map(toTeamChatChannel) }, 200);
  });
}
