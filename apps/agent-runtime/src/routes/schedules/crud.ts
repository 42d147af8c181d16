import {
  createScheduleRoute,
  deleteScheduleRoute,
  getScheduleRoute,
  listSchedulesRoute,
  updateScheduleRoute,
} from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  toSchedule,
  updateSchedule,
} from "../../schedules/store.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListSchedules(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listSchedulesRoute, async (c) =>
    c.json({ items: (await listSchedules(deps.database.db)).map(toSchedule) }, 200),
  );
}

export function registerCreateSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(createScheduleRoute, async (c) => {
    const row = await createSchedule(deps.database.db, c.req.valid("json"), deps.scheduler.now);
    deps.scheduler.wake();
    return c.json(toSchedule(row), 201);
  });
}

export function registerGetSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getScheduleRoute, async (c) =>
    c.json(toSchedule(await getSchedule(deps.database.db, c.req.valid("param").id)), 200),
  );
}

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

export function registerDeleteSchedule(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(deleteScheduleRoute, async (c) => {
    await deleteSchedule(deps.database.db, c.req.valid("param").id);
    return c.body(null, 204);
  });
}
