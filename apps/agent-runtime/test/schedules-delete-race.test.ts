import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { text } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime | undefined;
const now = Date.parse("2026-06-01T08:00:00.000Z");

beforeAll(async () => {
  fake = await startFakeModel();
  fake.respond = () => text("done");
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

async function withSchedule() {
  rt = await startTestRuntime(fake, { runtimeOptions: { clock: () => now, scheduleTimer: false } });
  const res = await rt.json<{ id: string }>("POST", "/agents/schedules", {
    name: "every-minute",
    everySeconds: 60,
    prompt: "Summarize the day",
  });
  expect(res.status).toBe(201);
  return { r: rt, id: res.body.id, db: rt.runtime.deps.database.db };
}

/**
 * A schedule deleted while a run of it starts: the run is not recorded, the start is a 404
 * like any other request for a deleted schedule, and nothing is left to reject unobserved
 * (an unhandled rejection stops the runtime).
 */
describe("a schedule deleted as its run starts", () => {
  it("run now is a 404 naming the schedule, not a 500", async () => {
    const { r, id, db } = await withSchedule();
    const [started, deleted] = await Promise.allSettled([
      r.runtime.deps.scheduler.runNow(id),
      db.deleteFrom("schedule").where("id", "=", id).execute(),
    ]);
    expect(deleted.status).toBe("fulfilled");
    expect(started.status).toBe("rejected");
    expect((started as PromiseRejectedResult).reason).toMatchObject({ status: 404 });
    expect(String((started as PromiseRejectedResult).reason.message)).toContain(id);
    await r.runtime.deps.scheduler.idle();
    expect(await db.selectFrom("schedule_run").select("id").execute()).toEqual([]);
    expect(r.runtime.deps.scheduler.isRunning(id)).toBe(false);
  });

  it("over HTTP, run and delete at once answer 202 or 404 and 204, never a 500", async () => {
    const { r } = await withSchedule();
    for (let n = 0; n < 10; n++) {
      const made = await r.json<{ id: string }>("POST", "/agents/schedules", {
        name: `race-${n}`,
        everySeconds: 60,
        prompt: "p",
      });
      const [run, deleted] = await Promise.all([
        r.json("POST", `/agents/schedules/${made.body.id}/run`),
        r.json("DELETE", `/agents/schedules/${made.body.id}`),
      ]);
      expect([202, 404]).toContain(run.status);
      expect(deleted.status).toBe(204);
    }
    await r.runtime.deps.scheduler.idle();
  });
});
