import { getScheduleRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { getSchedule, toSchedule } from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getScheduleRoute, async (c) =>
    c.json(toSchedule(await getSchedule(deps.database.db, c.req.valid("param").id)), 200),
  );
}
