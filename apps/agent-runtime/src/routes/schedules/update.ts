import { updateScheduleRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toSchedule, updateSchedule } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateScheduleRoute, async (c) => {
    const row = await updateSchedule(
      deps.database.db,
      c.req.valid("param").id,
      c.req.valid("json"),
      deps.scheduler.now,
    );
    deps.scheduler.wake();
    return c.json(toSchedule(row), 200);
  });
}
