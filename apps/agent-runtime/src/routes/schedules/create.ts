import { createScheduleRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { createSchedule, toSchedule } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerCreateSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(createScheduleRoute, async (c) => {
    const row = await createSchedule(deps.database.db, c.req.valid("json"), deps.scheduler.now);
    deps.scheduler.wake();
    return c.json(toSchedule(row), 201);
  });
}
