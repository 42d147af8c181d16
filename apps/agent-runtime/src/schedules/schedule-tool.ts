import { CreateScheduleBody, UpdateScheduleBody } from "@agentplane/contracts/runtime";
import { ProblemError } from "@agentplane/problem-details";
import { z } from "zod";
import { type AgentTool, toolError, toolResult } from "../tools/types.ts";
import type { Scheduler } from "./scheduler.ts";
import {
  createSchedule,
  deleteSchedule,
  findSchedule,
  listScheduleRuns,
  listSchedules,
  toSchedule,
  toScheduleRun,
  updateSchedule,
} from "./store.ts";

const Input = z.object({
  action: z.enum(["list", "create", "update", "delete", "run", "history"]),
  schedule: z.string().optional(),
  name: z.string().optional(),
  cron: z.string().nullable().optional(),
  at: z.string().nullable().optional(),
  everySeconds: z.number().nullable().optional(),
  timezone: z.string().nullable().optional(),
  prompt: z.string().optional(),
  deliverTo: z.string().optional(),
  active: z.boolean().optional(),
});

function problemText(err: ProblemError): string {
  const fields = (err.errors ?? []).map((e) => `${e.pointer?.replace("/body/", "") ?? ""}: ${e.message}`);
  return fields.length > 0 ? fields.join("; ") : (err.detail ?? err.message);
}

/** The agent's own schedule management, with the same rules as `/agents/schedules`. */
export function scheduleTool(scheduler: Scheduler): AgentTool {
  return {
    name: "manage_schedules",
    manages: true,
    description:
      "List, create, update, delete, run now, or show the history of your scheduled runs. A schedule has a name, " +
      "exactly one of cron (5 or 6 fields, with optional IANA timezone), at (ISO 8601 time, runs once) or everySeconds, " +
      'a prompt you will be given when it runs, and deliverTo ("All channels", "Chat" or "Team chat"). ' +
      "Identify an existing schedule by id or name in `schedule`.",
    inputSchema: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["list", "create", "update", "delete", "run", "history"] },
        schedule: { type: "string", description: "id or name of an existing schedule" },
        name: { type: "string" },
        cron: { type: ["string", "null"] },
        at: { type: ["string", "null"] },
        everySeconds: { type: ["integer", "null"] },
        timezone: { type: ["string", "null"] },
        prompt: { type: "string" },
        deliverTo: { type: "string", enum: ["All channels", "Chat", "Team chat"] },
        active: { type: "boolean" },
      },
      required: ["action"],
      additionalProperties: false,
    },
    async handler(raw, context) {
      const parsed = Input.safeParse(raw);
      if (!parsed.success) return toolError(`Invalid input: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
      const { action, schedule, ...fields } = parsed.data;
      const db = context.db;
      try {
        if (action === "list") return toolResult({ items: (await listSchedules(db)).map(toSchedule) });
        if (action === "create") {
          const body = CreateScheduleBody.safeParse(fields);
          if (!body.success) return toolError(`Invalid schedule: ${fieldIssues(body.error)}`);
          const row = await createSchedule(db, body.data, scheduler.now);
          scheduler.wake();
          return toolResult(toSchedule(row));
        }
        if (!schedule) return toolError("`schedule` (id or name) is required for this action");
        const row = await findSchedule(db, schedule);
        if (action === "update") {
          const body = UpdateScheduleBody.safeParse(fields);
          if (!body.success) return toolError(`Invalid schedule: ${fieldIssues(body.error)}`);
          const updated = await updateSchedule(db, row.id, body.data, scheduler.now);
          scheduler.wake();
          return toolResult(toSchedule(updated));
        }
        if (action === "delete") {
          await deleteSchedule(db, row.id);
          return toolResult({ deleted: row.id });
        }
        if (action === "history")
          return toolResult({ items: (await listScheduleRuns(db, row.id, 20)).map(toScheduleRun) });
        if (scheduler.isRunning(row.id)) return toolError(`Schedule ${row.name} is running already`);
        // Not awaited: a run is a turn of its own and would wait for this one.
        const { run } = await scheduler.runNow(row.id);
        return toolResult({ started: toScheduleRun(run) });
      } catch (err) {
        if (err instanceof ProblemError) return toolError(problemText(err));
        throw err;
      }
    },
  };
}

function fieldIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ");
}
