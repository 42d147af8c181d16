import { getHeartbeatSettingsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { readChecklistFile } from "../../heartbeat/heartbeat.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetHeartbeatSettings(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getHeartbeatSettingsRoute, async (c) => {
    // A checklist over the size limit is not run, and not read here either: shown empty.
    const file = await readChecklistFile(deps.config.dataDir);
    const checklist = "text" in file ? file.text : "";
    return c.json({ intervalMinutes: deps.config.env.HEARTBEAT_INTERVAL_MINUTES, checklist }, 200);
  });
}
