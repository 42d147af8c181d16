import { updateAgentModelsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { checkModelOverrides, setModelOverrides, toProfile } from "../../services/agent.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateAgentModels(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateAgentModelsRoute, async (c) => {
    const body = c.req.valid("json");
    checkModelOverrides(deps.config.provider, body);
    const agent = await setModelOverrides(deps.database.db, body);
    return c.json(toProfile(agent, deps.config, deps.catalog), 200);
  });
}
