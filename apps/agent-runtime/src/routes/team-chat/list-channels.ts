import { listTeamChatChannelsRoute } from "@agentplane/contracts/runtime";
import { listChannels, toTeamChatChannel } from "../../chat/store.ts";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListTeamChatChannels(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listTeamChatChannelsRoute, async (c) =>
    c.json({ data: (await listChannels(deps.database.db)).map(toTeamChatChannel) }, 200),
  );
}
