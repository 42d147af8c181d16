import { listScheduleRunsRoute, runScheduleRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { listScheduleRuns, toScheduleRun } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerRunSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(runScheduleRoute, async (c) => {
    const { run } = await deps.scheduler.runNow(c.req.valid("param").id);
    return c.json(toScheduleRun(run), 202);
  });
}

export function registerListScheduleRuns(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listScheduleRunsRoute, async (c) => {
    const rows = await listScheduleRuns(deps.database.db, c.req.valid("param").id);
    return c.json({ items: rows.map(toScheduleRun) }, 200);
  });
}
