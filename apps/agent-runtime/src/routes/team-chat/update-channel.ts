import { updateTeamChatChannelRoute } from "@agentplane/contracts/runtime";
import { conflict } from "@agentplane/problem-details";
import { listChannels, toTeamChatChannel, updateChannel } from "../../chat/store.ts";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateTeamChatChannel(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateTeamChatChannelRoute, async (c) => {
    const { channelId } = c.req.valid("param");
    const change = c.req.valid("json");
    let name: string | null = null;
    // Only linking asks team chat: for the channel's name (none when the lookup fails) and whether
    // its channel allow-list takes the channel. Unlinking and flagging are always allowed.
    if (change.linked === true && deps.teamChat?.channelToLink) {
      const channel = await deps.teamChat.channelToLink(channelId);
      if (channel.refused) throw conflict(`Channel ${channelId} cannot be linked: ${channel.refused}`);
      name = channel.name;
    }
    await updateChannel(deps.database.db, channelId, change, name);
    return c.json({ data: (await listChannels(deps.database.db)).map(toTeamChatChannel) }, 200);
  });
}
