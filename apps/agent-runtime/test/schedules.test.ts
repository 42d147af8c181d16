import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { MAX_SCHEDULES } from "@agentplane/contracts/runtime";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, startTestRuntime, type TestRuntime, tempHome, waitFor } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime | undefined;
let now = Date.parse("2026-06-01T08:00:00.000Z");
const clock = () => now;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

async function start(home?: string) {
  rt = await startTestRuntime(fake, {
    ...(home ? { home } : {}),
    runtimeOptions: { clock, scheduleTimer: false },
  });
  return rt;
}

type Schedule = {
  id: string;
  nextRunAt: string | null;
  consecutiveFailures: number;
  active: boolean;
  pausedReason: string | null;
};
type Run = {
  id: string;
  status: string;
  trigger: string;
  error: string | null;
  scheduledFor: string;
  result: string | null;
};

async function create(r: TestRuntime, body: Record<string, unknown>) {
  const res = await r.json<Schedule>("POST", "/agents/schedules", { prompt: "Summarize the day", ...body });
  expect(res.status).toBe(201);
  return res.body;
}
const runsOf = async (r: TestRuntime, id: string) =>
  (await r.json<{ items: Run[] }>("GET", `/agents/schedules/${id}/runs`)).body.items;
const get = async (r: TestRuntime, id: string) => (await r.json<Schedule>("GET", `/agents/schedules/${id}`)).body;
async function webTexts(r: TestRuntime): Promise<string[]> {
  const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const main = threads.body.items.find((t) => t.main)?.id;
  return (await r.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`)).body.items.map(
    (m) => m.text,
  );
}

describe("schedule endpoints", () => {
  it("reject an invalid cron expression or time zone with a 400 naming the field", async () => {
    const r = await start();
    const badCron = await r.json<{ errors: Array<{ pointer: string }> }>("POST", "/agents/schedules", {
      name: "x",
      cron: "61 * * * *",
      prompt: "p",
    });
    expect(badCron.status).toBe(400);
    expect(badCron.body.errors.map((e) => e.pointer)).toEqual(["/body/cron"]);
    const badZone = await r.json<{ errors: Array<{ pointer: string }> }>("POST", "/agents/schedules", {
      name: "x",
      cron: "0 9 * * *",
      timezone: "Mars/Olympus_Mons",
      prompt: "p",
    });
    expect(badZone.status).toBe(400);
    expect(badZone.body.errors.map((e) => e.pointer)).toEqual(["/body/timezone"]);
    const none = await r.json("POST", "/agents/schedules", { name: "x", prompt: "p" });
    expect(none.status).toBe(400);
    const tooFast = await r.json<{ errors: Array<{ pointer: string }> }>("POST", "/agents/schedules", {
      name: "x",
      everySeconds: 1,
      prompt: "p",
    });
    expect(tooFast.body.errors[0]?.pointer).toBe("/body/everySeconds");
    // A seconds field is held to the same floor; one at least that far apart is fine.
    for (const cron of ["* * * * * *", "*/5 * * * * *", "0,55 * * * * *", "0-2 0 9 * * *"]) {
      const fast = await r.json<{ errors: Array<{ pointer: string }> }>("POST", "/agents/schedules", {
        name: "fast",
        cron,
        prompt: "p",
      });
      expect(fast.status, cron).toBe(400);
      expect(
        fast.body.errors.map((e) => e.pointer),
        cron,
      ).toEqual(["/body/cron"]);
    }
    // Valid fields that no date matches would never run: refused, not stored with no next run.
    for (const cron of ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"]) {
      const never = await r.json<{ errors: Array<{ pointer: string; message: string }> }>("POST", "/agents/schedules", {
        name: "never",
        cron,
        prompt: "p",
      });
      expect(never.status, cron).toBe(400);
      expect(never.body.errors, cron).toEqual([{ pointer: "/body/cron", message: expect.stringMatching(/never run/) }]);
    }
    for (const [name, cron] of [
      ["leap-day", "0 0 29 2 *"],
      ["every-ten", "*/10 * * * * *"],
      ["twice", "0,30 * * * * *"],
      ["daily", "15 0 9 * * *"],
    ]) {
      expect((await r.json("POST", "/agents/schedules", { name, cron, prompt: "p" })).status, cron).toBe(201);
    }
  });

  it("create, read, update, run on time with the cron model, deliver, and delete", async () => {
    const r = await start();
    // 08:00Z is 10:00 in Berlin (summer time): the next 09:00 there is tomorrow at 07:00Z.
    const daily = await create(r, { name: "daily", cron: "0 9 * * *", timezone: "Europe/Berlin", deliverTo: "Chat" });
    expect(daily.nextRunAt).toBe("2026-06-02T07:00:00.000Z");
    const dup = await r.json("POST", "/agents/schedules", { name: "daily", everySeconds: 60, prompt: "p" });
    expect(dup.status).toBe(409);
    await r.json("PATCH", "/agents/models", { cron: "cron-deployment" });
    fake.respond = (body) => text(`done: ${lastUserText(body)} with ${body.model}`);
    now = Date.parse("2026-06-02T07:00:00.000Z");
    await r.runtime.deps.scheduler.tick();
    const [run] = await runsOf(r, daily.id);
    expect(run).toMatchObject({ status: "succeeded", trigger: "schedule", scheduledFor: "2026-06-02T07:00:00.000Z" });
    expect((await webTexts(r)).at(-1)).toBe("**Scheduled: daily**\n\ndone: Summarize the day with cron-deployment");
    expect((await get(r, daily.id)).nextRunAt).toBe("2026-06-03T07:00:00.000Z");

    const patched = await r.json<Schedule>("PATCH", `/agents/schedules/${daily.id}`, { everySeconds: 600 });
    expect(patched.body).toMatchObject({
      cron: null,
      timezone: null,
      everySeconds: 600,
      nextRunAt: "2026-06-02T07:10:00.000Z",
    });
    const paused = await r.json<Schedule>("PATCH", `/agents/schedules/${daily.id}`, { active: false });
    expect(paused.body).toMatchObject({ active: false, nextRunAt: null });
    expect((await r.json("DELETE", `/agents/schedules/${daily.id}`)).status).toBe(204);
    expect((await r.json("GET", `/agents/schedules/${daily.id}`)).status).toBe(404);
  });

  it(`keep at most ${MAX_SCHEDULES}: one more is a 409, through the API and the agent's tool alike`, async () => {
    const r = await start();
    const db = r.runtime.deps.database.db;
    const t = new Date(now).toISOString();
    await db
      .insertInto("schedule")
      .values(
        Array.from({ length: MAX_SCHEDULES }, (_, i) => ({
          id: `sch_${i}`,
          name: `s${i}`,
          cron: null,
          at: null,
          every_seconds: 3600,
          timezone: null,
          prompt: "p",
          deliver_to: "Chat",
          active: 0,
          next_run_at: null,
          last_run_at: null,
          consecutive_failures: 0,
          paused_reason: null,
          created_at: t,
          updated_at: t,
        })),
      )
      .execute();
    const over = await r.json<{ detail: string }>("POST", "/agents/schedules", {
      name: "one-more",
      everySeconds: 60,
      prompt: "p",
    });
    expect(over.status).toBe(409);
    expect(over.body.detail).toBe(
      `The runtime keeps at most ${MAX_SCHEDULES} schedules; delete one before creating another`,
    );
    fake.respond = scripted([
      calls(toolUse("manage_schedules", { action: "create", name: "flood", everySeconds: 10, prompt: "x" })),
      text("No room."),
    ]);
    const before = fake.requests.length;
    const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((th) => th.main)?.id;
    await r.json("POST", `/agents/threads/${main}/messages?stream=false`, { text: "schedule a flood" });
    const [result] = fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body));
    expect(result).toMatchObject({ is_error: true });
    expect(result?.content).toContain(`at most ${MAX_SCHEDULES} schedules`);
    expect(await r.json("DELETE", "/agents/schedules/sch_0")).toMatchObject({ status: 204 });
    expect(
      (await r.json("POST", "/agents/schedules", { name: "one-more", everySeconds: 60, prompt: "p" })).status,
    ).toBe(201);
  });

  it("a one-shot `at` runs once", async () => {
    const r = await start();
    fake.respond = () => text("reminder sent");
    const once = await create(r, { name: "once", at: new Date(now + 5 * 60_000).toISOString() });
    now += 5 * 60_000;
    await r.runtime.deps.scheduler.tick();
    now += 24 * 3600_000;
    await r.runtime.deps.scheduler.tick();
    expect((await runsOf(r, once.id)).map((x) => x.status)).toEqual(["succeeded"]);
    expect((await get(r, once.id)).nextRunAt).toBeNull();
    // It keeps its past `at` through an edit of another field; a past `at` is refused.
    expect((await r.json("PATCH", `/agents/schedules/${once.id}`, { prompt: "Again" })).status).toBe(200);
    const moved = await r.json<{ errors: Array<{ pointer: string }> }>("PATCH", `/agents/schedules/${once.id}`, {
      at: new Date(now - 1000).toISOString(),
    });
    expect(moved.status).toBe(400);
    expect(moved.body.errors.map((e) => e.pointer)).toEqual(["/body/at"]);
  });

  it("a one-shot `at` that is not ahead of now is a 400 naming the field", async () => {
    const r = await start();
    for (const at of [new Date(now).toISOString(), "2020-01-01T00:00:00+01:00"]) {
      const res = await r.json<{ detail: string; errors: Array<{ pointer: string }> }>("POST", "/agents/schedules", {
        name: "late",
        at,
        prompt: "p",
      });
      expect(res.status, at).toBe(400);
      expect(res.body.errors.map((e) => e.pointer)).toEqual(["/body/at"]);
      expect(res.body.detail).toContain("would never run");
    }
    expect((await r.json<{ items: unknown[] }>("GET", "/agents/schedules")).body.items).toEqual([]);
  });
});

describe("scheduled runs", () => {
  it("never overlap themselves: a due tick during a run is recorded as skipped, run-now answers 409", async () => {
    const r = await start();
    const every = await create(r, { name: "every-minute", everySeconds: 60 });
    fake.respond = () => ({ ...text("slow"), delayMs: 1200 });
    now += 60_000;
    const first = r.runtime.deps.scheduler.tick();
    await waitFor(() => r.runtime.deps.scheduler.isRunning(every.id) || undefined);
    now += 60_000;
    await r.runtime.deps.scheduler.tick(false);
    expect((await r.json("POST", `/agents/schedules/${every.id}/run`)).status).toBe(409);
    await first;
    const runs = await runsOf(r, every.id);
    expect(runs.map((x) => x.status).sort()).toEqual(["skipped", "succeeded"]);
    expect(runs.find((x) => x.status === "skipped")?.error).toMatch(/still running/);
    // Run now, once idle.
    fake.respond = () => text("manual");
    const manual = await r.json<Run>("POST", `/agents/schedules/${every.id}/run`);
    expect(manual.status).toBe(202);
    expect(manual.body).toMatchObject({ trigger: "manual", status: "running" });
    await r.runtime.deps.scheduler.idle();
    expect((await runsOf(r, every.id))[0]).toMatchObject({ id: manual.body.id, status: "succeeded", result: "manual" });
  });

  it("back off after failures and pause after 10 in a row with a notice", async () => {
    const r = await start();
    const flaky = await create(r, { name: "flaky", everySeconds: 10, deliverTo: "Chat" });
    fake.respond = () => ({ content: [], status: 500 });
    const gaps: number[] = [];
    for (let i = 1; i <= 10; i++) {
      const due = Date.parse((await get(r, flaky.id)).nextRunAt as string);
      now = due;
      await r.runtime.deps.scheduler.tick();
      const after = await get(r, flaky.id);
      if (after.nextRunAt) gaps.push((Date.parse(after.nextRunAt) - now) / 1000);
      expect(after.consecutiveFailures).toBe(i);
    }
    expect(gaps).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    const paused = await get(r, flaky.id);
    expect(paused).toMatchObject({
      active: false,
      nextRunAt: null,
      pausedReason: "paused after 10 consecutive failed runs",
    });
    const texts = await webTexts(r);
    expect(texts.filter((t) => t.startsWith("**Scheduled: flaky**\n\nThe run failed"))).toHaveLength(10);
    expect(texts.at(-1)).toMatch(/paused after 10 consecutive failed runs; set it active again to resume/);
    // Nothing runs while paused; re-activating clears the count.
    now += 3600_000;
    await r.runtime.deps.scheduler.tick();
    expect(await runsOf(r, flaky.id)).toHaveLength(10);
    const resumed = await r.json<Schedule>("PATCH", `/agents/schedules/${flaky.id}`, { active: true });
    expect(resumed.body).toMatchObject({ active: true, consecutiveFailures: 0, pausedReason: null });
  });

  it("a missed run less than one interval late runs once at start, an older one is recorded as skipped", async () => {
    const home = tempHome();
    let r = await start(home);
    const hourly = await create(r, { name: "hourly", everySeconds: 3600 });
    const minutely = await create(r, { name: "minutely", everySeconds: 60 });
    await r.close();
    rt = undefined;
    fake.respond = () => text("caught up");
    now += 3600_000 + 120_000;
    r = await start(home);
    await r.runtime.deps.scheduler.idle();
    expect(await runsOf(r, hourly.id)).toMatchObject([{ trigger: "missed", status: "succeeded" }]);
    const [skipped] = await runsOf(r, minutely.id);
    expect(skipped).toMatchObject({ trigger: "missed", status: "skipped" });
    expect(skipped?.error).toMatch(/more than one interval/);
    expect(Date.parse((await get(r, minutely.id)).nextRunAt as string)).toBe(now + 60_000);
  });

  it("are managed by the agent's schedule tool", async () => {
    const r = await start();
    fake.respond = scripted([
      calls(
        toolUse("manage_schedules", {
          action: "create",
          name: "standup",
          cron: "30 9 * * 1-5",
          timezone: "UTC",
          prompt: "Post the standup",
        }),
      ),
      calls(toolUse("manage_schedules", { action: "create", name: "bad", cron: "not cron", prompt: "x" })),
      calls(toolUse("manage_schedules", { action: "list" })),
      text("Scheduled."),
    ]);
    const before = fake.requests.length;
    const threads = await r.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((t) => t.main)?.id;
    await r.json("POST", `/agents/threads/${main}/messages?stream=false`, { text: "schedule the standup" });
    const results = fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body));
    expect(results[0]?.is_error).toBe(false);
    expect(results[1]).toMatchObject({ is_error: true });
    expect(results[1]?.content).toMatch(/^cron: not a valid cron expression/);
    expect(JSON.parse(results[2]?.content ?? "{}").items.map((s: { name: string }) => s.name)).toEqual(["standup"]);
    expect((await r.json<{ items: unknown[] }>("GET", "/agents/schedules")).body.items).toHaveLength(1);
  });
});

describe("kill -9 and restart", () => {
  const MAIN = join(import.meta.dirname, "..", "src", "main.ts");
  async function spawnRuntime(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH ?? "", ...env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = "";
      child.stdout?.on("data", (d) => {
        buffered += String(d);
        const match = /"url":"(http:\/\/[^"]+)"/.exec(buffered);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`runtime exited with ${code}`)));
    });
    return { child, url };
  }

  it("keeps schedules and their history; a run cut short is closed as interrupted", async () => {
    const home = tempHome();
    const { child, url } = await spawnRuntime({ ...fakeModelEnv(fake, home), LOG_LEVEL: "info" });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    fake.respond = (body) =>
      lastUserText(body) === "slow" ? { ...text("never seen"), delayMs: 5000 } : text("fast done");
    const fast = await call("POST", "/agents/schedules", { name: "fast", everySeconds: 3600, prompt: "fast" });
    const slow = await call("POST", "/agents/schedules", { name: "slow", cron: "0 0 1 1 *", prompt: "slow" });
    await call("POST", `/agents/schedules/${fast.id}/run`);
    await waitFor(
      async () =>
        ((await call("GET", `/agents/schedules/${fast.id}/runs`)).items as Run[])[0]?.status === "succeeded" ||
        undefined,
    );
    await call("POST", `/agents/schedules/${slow.id}/run`);
    await waitFor(() => fake.requests.some((q) => lastUserText(q.body) === "slow") || undefined);
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });

    now = Date.now();
    const r = await start(home);
    const names = (await r.json<{ items: Array<{ name: string }> }>("GET", "/agents/schedules")).body.items.map(
      (s) => s.name,
    );
    expect(names).toEqual(["fast", "slow"]);
    expect(await runsOf(r, fast.id as string)).toMatchObject([{ status: "succeeded", result: "fast done" }]);
    expect(await runsOf(r, slow.id as string)).toMatchObject([
      { status: "failed", error: "interrupted: the runtime stopped during the run" },
    ]);
  });
});
