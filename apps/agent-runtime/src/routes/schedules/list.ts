import { listSchedulesRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { listSchedules, toSchedule } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListSchedules(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listSchedulesRoute, async (c) =>
    c.json({ items: (await listSchedules(deps.database.db)).map(toSchedule) }, 200),
  );
}
