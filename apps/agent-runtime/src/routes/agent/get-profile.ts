import { getAgentProfileRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { loadAgent, toProfile } from "../../services/agent.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetAgentProfile(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getAgentProfileRoute, async (c) =>
    c.json(toProfile(await loadAgent(deps.database.db), deps.config, deps.catalog), 200),
  );
}
