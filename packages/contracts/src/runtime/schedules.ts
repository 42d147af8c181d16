import { z } from "@hono/zod-openapi";
import { defineRuntimeRoute } from "./define-route.ts";
import { DeliveryTarget } from "./webhooks.ts";

export const SCHEDULE_RUN_STATUSES = ["running", "succeeded", "failed", "skipped"] as const;
export const SCHEDULE_RUN_TRIGGERS = ["schedule", "manual", "missed"] as const;
/** Consecutive failed runs after which a schedule is paused (with a notice on its target). */
export const MAX_CONSECUTIVE_SCHEDULE_FAILURES = 10;
export const MIN_SCHEDULE_INTERVAL_SECONDS = 10;
/** Schedules one runtime keeps; past it a create is a 409 (a flood of schedules is a flood of turns). */
export const MAX_SCHEDULES = 100;

export const Schedule = z
  .object({
    id: z.string(),
    name: z.string(),
    cron: z.string().nullable(),
    at: z.string().nullable(),
    everySeconds: z.number().int().nullable(),
    timezone: z.string().nullable(),
    prompt: z.string(),
    deliverTo: DeliveryTarget,
    active: z.boolean(),
    /** When the next run is due; null when inactive or a one-shot already ran. */
    nextRunAt: z.string().nullable(),
    lastRunAt: z.string().nullable(),
    consecutiveFailures: z.number().int(),
    /** Why the runtime paused it (repeated failures); null when the owner set `active`. */
    pausedReason: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Schedule");

const Name = z.string().trim().min(1).max(100);
const Prompt = z.string().min(1).max(20_000);
const Cron = z.string().trim().min(1).max(200).openapi({ example: "0 9 * * 1-5" });
const At = z.iso.datetime({ offset: true }).openapi({ example: "2026-12-01T09:00:00+01:00" });
const Every = z
  .number()
  .int()
  .min(MIN_SCHEDULE_INTERVAL_SECONDS)
  .max(366 * 24 * 3600);
const Timezone = z.string().trim().min(1).max(64).openapi({ example: "Europe/Berlin" });

/** Exactly one of `cron`, `at`, `everySeconds`; `timezone` applies to `cron`. */
export const CreateScheduleBody = z
  .object({
    name: Name,
    cron: Cron.optional(),
    at: At.optional(),
    everySeconds: Every.optional(),
    timezone: Timezone.optional(),
    prompt: Prompt,
    deliverTo: DeliveryTarget.default("All channels"),
    active: z.boolean().default(true),
  })
  .strict()
  .openapi("CreateSchedule");

export const UpdateScheduleBody = z
  .object({
    name: Name.optional(),
    cron: Cron.nullable().optional(),
    at: At.nullable().optional(),
    everySeconds: Every.nullable().optional(),
    timezone: Timezone.nullable().optional(),
    prompt: Prompt.optional(),
    deliverTo: DeliveryTarget.optional(),
    active: z.boolean().optional(),
  })
  .strict()
  .openapi("UpdateSchedule");

export const ScheduleList = z.object({ items: z.array(Schedule) }).openapi("ScheduleList");

export const ScheduleRun = z
  .object({
    id: z.string(),
    scheduleId: z.string(),
    trigger: z.enum(SCHEDULE_RUN_TRIGGERS),
    status: z.enum(SCHEDULE_RUN_STATUSES),
    /** The due time this run stands for (the request time for a manual run). */
    scheduledFor: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    /** The delivered answer of a succeeded run. */
    result: z.string().nullable(),
    /** Why it failed or was skipped. */
    error: z.string().nullable(),
  })
  .openapi("ScheduleRun");

export const ScheduleRunList = z.object({ items: z.array(ScheduleRun) }).openapi("ScheduleRunList");

export type Schedule = z.infer<typeof Schedule>;
export type ScheduleRun = z.infer<typeof ScheduleRun>;
export type CreateScheduleBody = z.infer<typeof CreateScheduleBody>;
export type UpdateScheduleBody = z.infer<typeof UpdateScheduleBody>;

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const idParam = z.object({
  id: z
    .string()
    .min(1)
    .openapi({ param: { name: "id", in: "path" } }),
});

export const listSchedulesRoute = defineRuntimeRoute(
  { errors: [] },
  {
    method: "get",
    path: "/agents/schedules",
    operationId: "listSchedules",
    responses: { 200: json(ScheduleList, "Every schedule, oldest first") },
  },
);

export const createScheduleRoute = defineRuntimeRoute(
  { errors: [400, 409] },
  {
    method: "post",
    path: "/agents/schedules",
    operationId: "createSchedule",
    request: { body: body(CreateScheduleBody) },
    responses: {
      201: json(Schedule, "The new schedule"),
    },
  },
);

export const getScheduleRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "get",
    path: "/agents/schedules/{id}",
    operationId: "getSchedule",
    request: { params: idParam },
    responses: { 200: json(Schedule, "The schedule") },
  },
);

export const updateScheduleRoute = defineRuntimeRoute(
  { errors: [400, 404, 409] },
  {
    method: "patch",
    path: "/agents/schedules/{id}",
    operationId: "updateSchedule",
    request: { params: idParam, body: body(UpdateScheduleBody) },
    responses: {
      200: json(Schedule, "The updated schedule"),
    },
  },
);

export const deleteScheduleRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "delete",
    path: "/agents/schedules/{id}",
    operationId: "deleteSchedule",
    request: { params: idParam },
    responses: { 204: { description: "Deleted, with its run history" } },
  },
);

export const runScheduleRoute = defineRuntimeRoute(
  { errors: [404, 409] },
  {
    method: "post",
    path: "/agents/schedules/{id}/run",
    operationId: "runSchedule",
    request: { params: idParam },
    responses: {
      202: json(ScheduleRun, "The run started"),
    },
  },
);

export const listScheduleRunsRoute = defineRuntimeRoute(
  { errors: [404] },
  {
    method: "get",
    path: "/agents/schedules/{id}/runs",
    operationId: "listScheduleRuns",
    request: { params: idParam },
    responses: { 200: json(ScheduleRunList, "Recent runs, newest first") },
  },
);
