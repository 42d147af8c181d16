import { runScheduleRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toScheduleRun } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerRunSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(runScheduleRoute, async (c) => {
    const { run } = await deps.scheduler.runNow(c.req.valid("param").id);
    return c.json(toScheduleRun(run), 202);
  });
}
