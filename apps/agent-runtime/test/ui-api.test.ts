import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STOPPED_NOTICE } from "../src/turns/run-turn.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

// The operations the web and terminal UIs use beyond chat, settings, webhooks and schedules.
let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  fake.respond = (body) =>
    lastUserText(body).includes("slow")
      ? { content: [{ type: "text", text: "too late" }], delayMs: 8000 }
      : { content: [{ type: "text", text: `echo: ${lastUserText(body)}` }] };
  rt = await startTestRuntime(fake, { env: { HEARTBEAT_INTERVAL_MINUTES: "15" } });
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

describe("memory notes", () => {
  it("lists the newest first, searches, and deletes; an unknown id is 404", async () => {
    const memory = rt.runtime.deps.memory;
    const first = await memory.add("The staging database moved to eu-west", "test");
    await memory.add("Alice prefers short answers", "test");
    const listed = await rt.json<{ items: Array<{ id: string; text: string }> }>("GET", "/agents/memory");
    expect(listed.body.items.map((n) => n.text)).toEqual([
      "Alice prefers short answers",
      "The staging database moved to eu-west",
    ]);
    const found = await rt.json<{ items: Array<{ id: string; score: number }> }>(
      "GET",
      "/agents/memory?q=staging%20database",
    );
    expect(found.body.items[0]?.id).toBe(first.id);
    expect(found.body.items[0]?.score).toBeGreaterThan(0);

    expect((await rt.request("DELETE", `/agents/memory/${first.id}`)).status).toBe(204);
    expect((await rt.request("DELETE", `/agents/memory/${first.id}`)).status).toBe(404);
    const after = await rt.json<{ items: Array<{ id: string }> }>("GET", "/agents/memory?q=staging");
    expect(after.body.items.map((n) => n.id)).not.toContain(first.id);
    expect((await rt.json<{ items: unknown[] }>("GET", "/agents/memory")).body.items).toHaveLength(1);
  });
});

describe("heartbeat settings", () => {
  it("shows the interval and the checklist, not where the file lies on the server", async () => {
    const empty = await rt.json<{ intervalMinutes: number; checklist: string }>("GET", "/agents/heartbeat");
    expect(empty.body).toMatchObject({ intervalMinutes: 15, checklist: "" });
    writeFileSync(join(rt.home, "HEARTBEAT.md"), "- look at the queue\n");
    const filled = await rt.request("GET", "/agents/heartbeat");
    const text = await filled.text();
    // Project viewers read this through the platform: the server's file system is none of theirs.
    expect(JSON.parse(text)).toEqual({ intervalMinutes: 15, checklist: "- look at the queue\n" });
    expect(text).not.toContain(rt.home);
  });
});

describe("stopping a turn", () => {
  it("cuts a running turn short with a notice; nothing running answers stopped false; unknown thread 404", async () => {
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((t) => t.main)?.id as string;
    expect((await rt.json("POST", `/agents/threads/${main}/stop`)).body).toEqual({ stopped: false });
    expect((await rt.request("POST", "/agents/threads/nope/stop")).status).toBe(404);

    const started = Date.now();
    const turn = rt.json<{ delivered: Array<{ text: string }> }>(
      "POST",
      `/agents/threads/${main}/messages?stream=false`,
      {
        text: "a slow one",
      },
    );
    await waitFor(() => rt.runtime.deps.turns.running(main) && fake.requests.length > 0);
    expect((await rt.json("POST", `/agents/threads/${main}/stop`)).body).toEqual({ stopped: true });
    const { status, body } = await turn;
    expect(status).toBe(200);
    expect(body.delivered.map((m) => m.text)).toEqual([STOPPED_NOTICE]);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(rt.runtime.deps.turns.running(main)).toBe(false);
  });
});

describe("web UI files", () => {
  it("serves the page at / and refuses paths outside the assets", async () => {
    const page = await rt.request("GET", "/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect((await rt.request("GET", "/assets/..%2F..%2Fpackage.json")).status).toBe(404);
    expect((await rt.request("GET", "/assets/nothing.js")).status).toBe(404);
  });
});
