import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_WEB_TURNS, MAX_WEB_TURNS_PER_THREAD } from "../src/services/web-turn-slots.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  // Each turn holds its model call for a while, so the ones sent together are in flight together.
  fake.respond = (body) => ({ content: [{ type: "text", text: `echo ${lastUserText(body)}` }], delayMs: 1500 });
  rt = await startTestRuntime(fake);
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

const newThread = async () => (await rt.json<{ id: string }>("POST", "/agents/threads", {})).body.id;
const post = (threadId: string, text: string, stream = "false") =>
  rt.request("POST", `/agents/threads/${threadId}/messages?stream=${stream}`, { text });
const modelCallsFor = (prefix: string) => fake.requests.filter((r) => lastUserText(r.body).startsWith(prefix)).length;

async function expectRefused(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
}

describe("web chat turns in flight", () => {
  it("refuses a thread's turn past the bound with a 429, storing and calling nothing for it", async () => {
    const thread = await newThread();
    const held = Array.from({ length: MAX_WEB_TURNS_PER_THREAD }, (_, i) => post(thread, `flood-a ${i}`));
    // The held turns have started (their user messages are stored) before one more is sent.
    await new Promise((r) => setTimeout(r, 500));
    const extra = await post(thread, "flood-a extra");
    await expectRefused(extra);
    const streamed = await post(thread, "flood-a streamed", "true");
    await expectRefused(streamed);
    expect((await Promise.all(held)).map((r) => r.status)).toEqual(held.map(() => 200));
    expect(modelCallsFor("flood-a")).toBe(MAX_WEB_TURNS_PER_THREAD);
    const { body } = await rt.json<{ items: Array<{ role: string; text: string }> }>(
      "GET",
      `/agents/threads/${thread}/messages`,
    );
    expect(body.items.filter((m) => m.role === "user").map((m) => m.text)).not.toContain("flood-a extra");
    // Once they ended, the thread takes a turn again.
    expect((await post(thread, "flood-a after")).status).toBe(200);
  }, 60_000);

  it("refuses a turn past the bound across all threads", async () => {
    const held: Array<Promise<Response>> = [];
    while (held.length < MAX_WEB_TURNS) {
      const thread = await newThread();
      const count = Math.min(MAX_WEB_TURNS_PER_THREAD, MAX_WEB_TURNS - held.length);
      for (let i = 0; i < count; i++) held.push(post(thread, `flood-b ${held.length}`));
    }
    await new Promise((r) => setTimeout(r, 500));
    await expectRefused(await post(await newThread(), "flood-b extra"));
    expect((await Promise.all(held)).every((r) => r.status === 200)).toBe(true);
    expect(modelCallsFor("flood-b")).toBe(MAX_WEB_TURNS);
  }, 60_000);
});
