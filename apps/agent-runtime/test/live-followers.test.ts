import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LIVE_FOLLOWERS, MAX_LIVE_FOLLOWERS_PER_THREAD } from "../src/live/follower-slots.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake);
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

interface Open {
  status: number;
  res: Response;
  close(): void;
}

/** Opens a thread's live stream and keeps it open (its body unread) until closed. */
async function openStream(threadId: string): Promise<Open> {
  const controller = new AbortController();
  const res = await fetch(`${rt.url}/agents/threads/${threadId}/events`, { signal: controller.signal });
  return {
    status: res.status,
    res,
    close: () => {
      controller.abort();
      res.body?.cancel().catch(() => undefined);
    },
  };
}

const newThread = async () => (await rt.json<{ id: string }>("POST", "/agents/threads", {})).body.id;

async function expectRefused(open: Open, words: RegExp): Promise<void> {
  expect(open.status).toBe(429);
  expect(open.res.headers.get("content-type")).toContain("application/problem+json");
  expect(Number(open.res.headers.get("retry-after"))).toBeGreaterThan(0);
  const problem = (await open.res.json()) as { status: number; detail: string };
  expect(problem.status).toBe(429);
  expect(problem.detail).toMatch(words);
}

describe("live stream followers", () => {
  it("refuses a thread's follower past the bound with a 429, and takes one again once a stream closes", async () => {
    const thread = await newThread();
    const open: Open[] = [];
    for (let i = 0; i < MAX_LIVE_FOLLOWERS_PER_THREAD; i++) open.push(await openStream(thread));
    expect(open.map((o) => o.status)).toEqual(open.map(() => 200));
    await waitFor(() => (rt.runtime.deps.live.followers(thread) === MAX_LIVE_FOLLOWERS_PER_THREAD ? true : undefined));

    const extra = await openStream(thread);
    await expectRefused(extra, /this thread/);
    expect(rt.runtime.deps.live.followers(thread)).toBe(MAX_LIVE_FOLLOWERS_PER_THREAD);
    // Another thread is still followed.
    const other = await openStream(await newThread());
    expect(other.status).toBe(200);
    other.close();

    open.pop()?.close();
    await waitFor(() => (rt.runtime.deps.live.followers(thread) < MAX_LIVE_FOLLOWERS_PER_THREAD ? true : undefined));
    const again = await waitFor(async () => {
      const attempt = await openStream(thread);
      if (attempt.status === 200) return attempt;
      attempt.close();
      return undefined;
    });
    again.close();
    for (const o of open) o.close();
    await waitFor(() => (rt.runtime.deps.live.followers(thread) === 0 ? true : undefined));
  }, 60_000);

  it("refuses a follower past the bound across all threads", async () => {
    const open: Open[] = [];
    const threads: string[] = [];
    while (open.length < MAX_LIVE_FOLLOWERS) {
      const thread = await newThread();
      threads.push(thread);
      const count = Math.min(MAX_LIVE_FOLLOWERS_PER_THREAD, MAX_LIVE_FOLLOWERS - open.length);
      for (let i = 0; i < count; i++) open.push(await openStream(thread));
    }
    expect(open.every((o) => o.status === 200)).toBe(true);
    await expectRefused(await openStream(await newThread()), /at once/);
    for (const o of open) o.close();
    await waitFor(() => (threads.every((t) => rt.runtime.deps.live.followers(t) === 0) ? true : undefined));
    const after = await openStream(threads[0] as string);
    expect(after.status).toBe(200);
    after.close();
  }, 120_000);
});
