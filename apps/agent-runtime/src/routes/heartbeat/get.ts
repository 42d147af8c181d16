import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { getHeartbeatSettingsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { HEARTBEAT_FILE } from "../../heartbeat/heartbeat.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetHeartbeatSettings(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getHeartbeatSettingsRoute, async (c) => {
    const checklistPath = join(deps.config.dataDir, HEARTBEAT_FILE);
    const checklist = await readFile(checklistPath, "utf8").catch(() => "");
    return c.json({ intervalMinutes: deps.config.env.HEARTBEAT_INTERVAL_MINUTES, checklist, checklistPath }, 200);
  });
}
