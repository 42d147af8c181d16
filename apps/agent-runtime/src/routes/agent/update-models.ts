import { updateModelsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { setModelOverrides, toProfile } from "../../services/agent.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateModels(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateModelsRoute, async (c) => {
    const agent = await setModelOverrides(deps.database.db, c.req.valid("json"));
    return c.json(toProfile(agent, deps.config), 200);
  });
}
