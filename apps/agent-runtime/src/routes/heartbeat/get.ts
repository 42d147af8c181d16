import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { getHeartbeatSettingsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { HEARTBEAT_FILE } from "../../heartbeat/heartbeat.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetHeartbeatSettings(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getHeartbeatSettingsRoute, async (c) => {
    const checklist = await readFile(join(deps.config.dataDir, HEARTBEAT_FILE), "utf8").catch(() => "");
    return c.json({ intervalMinutes: deps.config.env.HEARTBEAT_INTERVAL_MINUTES, checklist }, 200);
  });
}
