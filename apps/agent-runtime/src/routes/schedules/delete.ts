import { deleteScheduleRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { deleteSchedule } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerDeleteSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(deleteScheduleRoute, async (c) => {
    await deleteSchedule(deps.database.db, c.req.valid("param").id);
    return c.body(null, 204);
  });
}
