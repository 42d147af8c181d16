import { getTeamChatRoute } from "@agentplane/contracts/runtime";
import { teamChatState } from "../../chat/state.ts";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetTeamChat(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getTeamChatRoute, async (c) => c.json(await teamChatState(deps), 200));
}
