import { updateAgentVerboseRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { setVerbose, toProfile } from "../../services/agent.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateAgentVerbose(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateAgentVerboseRoute, async (c) => {
    const { verbose } = c.req.valid("json");
    return c.json(toProfile(await setVerbose(deps.database.db, verbose), deps.config, deps.catalog), 200);
  });
}
