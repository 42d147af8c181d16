import { resetTeamChatOwnerRoute } from "@agentplane/contracts/runtime";
import { resetOwner } from "../../chat/state.ts";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerResetTeamChatOwner(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(resetTeamChatOwnerRoute, async (c) => c.json(await resetOwner(deps), 200));
}
