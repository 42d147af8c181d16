import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_MEMORY_MAX_NOTES, loadConfig } from "../src/config.ts";
import { MemoryFullError } from "../src/memory/store.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  fake.requests.length = 0;
});

async function turn(runtime: TestRuntime, message: string): Promise<void> {
  const threads = await runtime.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const main = threads.body.items.find((t) => t.main)?.id as string;
  const res = await runtime.request("POST", `/agents/threads/${main}/messages`, { text: message });
  expect(res.status).toBe(200);
  await readSse(res);
}

describe("the cap on memory notes (MEMORY_MAX_NOTES)", () => {
  it(`defaults to ${DEFAULT_MEMORY_MAX_NOTES}, and a value that is not a whole number of notes stops the start naming it`, () => {
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k" }).env.MEMORY_MAX_NOTES).toBe(DEFAULT_MEMORY_MAX_NOTES);
    expect(loadConfig({ CLOUD_A_BEARER_TOKEN: "k", MEMORY_MAX_NOTES: "50" }).env.MEMORY_MAX_NOTES).toBe(50);
    for (const bad of ["0", "-3", "2.5", "lots", "1000001"]) {
      expect(() => loadConfig({ CLOUD_A_BEARER_TOKEN: "k", MEMORY_MAX_NOTES: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ CLOUD_A_BEARER_TOKEN: "k", MEMORY_MAX_NOTES: bad })).toThrow(/MEMORY_MAX_NOTES/);
    }
  });

  it("refuses a note past the cap with a tool error naming the limit, stores nothing, and takes notes again once one is forgotten", async () => {
    rt = await startTestRuntime(fake, { env: { MEMORY_MAX_NOTES: "2" } });
    const memory = rt.runtime.deps.memory;
    fake.respond = scripted([
      calls(
        toolUse("memory", { action: "remember", text: "The staging database is db-2" }),
        toolUse("memory", { action: "remember", text: "Deploys happen on Tuesdays" }),
        toolUse("memory", { action: "remember", text: "The office plant needs water on Fridays" }),
      ),
      text("noted"),
    ]);
    await turn(rt, "remember these three things");
    const [first, second, third] = toolResultsOf(fake.requests[1]?.body ?? {});
    expect(first?.is_error).toBe(false);
    expect(second?.is_error).toBe(false);
    expect(third).toMatchObject({ is_error: true });
    expect(String(third?.content)).toContain("MEMORY_MAX_NOTES=2");
    expect(String(third?.content)).toContain("not stored");
    expect(memory.count()).toBe(2);
    expect(memory.recent().map((n) => n.text)).not.toContain("The office plant needs water on Fridays");
    // Straight to the store: the same refusal, never a silent drop.
    await expect(memory.add("one more", "test")).rejects.toBeInstanceOf(MemoryFullError);
    expect(memory.count()).toBe(2);

    const [oldest] = memory.recent().slice(-1);
    fake.requests.length = 0;
    fake.respond = scripted([
      calls(
        toolUse("memory", { action: "forget", id: oldest?.id as string }),
        toolUse("memory", { action: "remember", text: "The office plant needs water on Fridays" }),
      ),
      text("noted"),
    ]);
    await turn(rt, "forget the oldest and remember the plant");
    const results = toolResultsOf(fake.requests[1]?.body ?? {});
    expect(results.map((r) => r.is_error)).toEqual([false, false]);
    expect(memory.count()).toBe(2);
    expect(memory.recent()[0]?.text).toBe("The office plant needs water on Fridays");
  });
});
