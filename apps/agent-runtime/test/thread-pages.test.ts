import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

interface ThreadPage {
  items: Array<{ id: string; main: boolean; updatedAt: string }>;
  nextCursor?: string;
}

let fake: FakeModel;
let rt: TestRuntime;
const created: string[] = [];

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake);
  // 60 threads of our own besides the main one: more than a default page.
  for (let i = 0; i < 60; i++) {
    const res = await rt.json<{ id: string }>("POST", "/agents/threads", { title: `t${i}` });
    expect(res.status).toBe(201);
    created.push(res.body.id);
  }
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

describe("GET /agents/threads pages", () => {
  it("answers 50 threads by default, the main one first, with a cursor to the rest", async () => {
    const { status, body } = await rt.json<ThreadPage>("GET", "/agents/threads");
    expect(status).toBe(200);
    expect(body.items).toHaveLength(50);
    expect(body.items[0]?.main).toBe(true);
    expect(body.items.filter((t) => t.main)).toHaveLength(1);
    expect(typeof body.nextCursor).toBe("string");
  });

  it("walks every thread once, in order, by following nextCursor", async () => {
    const seen: ThreadPage["items"] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = cursor ? `?limit=7&cursor=${encodeURIComponent(cursor)}` : "?limit=7";
      const { status, body } = await rt.json<ThreadPage>("GET", `/agents/threads${query}`);
      expect(status).toBe(200);
      expect(body.items.length).toBeLessThanOrEqual(7);
      seen.push(...body.items);
      cursor = body.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBe(Math.ceil(61 / 7));
    const ids = seen.map((t) => t.id);
    expect(new Set(ids).size).toBe(61);
    expect(ids.filter((id) => created.includes(id))).toHaveLength(60);
    expect(seen[0]?.main).toBe(true);
    const rest = seen.slice(1).map((t) => t.updatedAt);
    expect(rest).toEqual([...rest].sort().reverse());
    // The largest page holds them all, in the same order, and has no cursor.
    const all = await rt.json<ThreadPage>("GET", "/agents/threads?limit=200");
    expect(all.body.items.map((t) => t.id)).toEqual(ids);
    expect(all.body.nextCursor).toBeUndefined();
  });

  it("moves a thread that becomes active to the front of the first page", async () => {
    const oldest = created[0] as string;
    const posted = await rt.request("POST", `/agents/threads/${oldest}/messages?stream=false`, { text: "hi" });
    expect(posted.status).toBe(200);
    const { body } = await rt.json<ThreadPage>("GET", "/agents/threads?limit=2");
    expect(body.items.map((t) => t.id)[1]).toBe(oldest);
  });

  it("refuses a limit out of bounds and a cursor it did not hand out, as problems", async () => {
    for (const query of ["limit=0", "limit=201", "limit=x", "cursor=not-a-cursor", `cursor=${"a".repeat(600)}`]) {
      const res = await rt.request("GET", `/agents/threads?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.headers.get("content-type"), query).toBe("application/problem+json");
    }
  });
});
