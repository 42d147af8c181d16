import { listScheduleRunsRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { listScheduleRuns, toScheduleRun } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListScheduleRuns(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listScheduleRunsRoute, async (c) => {
    const rows = await listScheduleRuns(deps.database.db, c.req.valid("param").id);
    return c.json({ items: rows.map(toScheduleRun) }, 200);
  });
}
