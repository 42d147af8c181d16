import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LIVE_BUFFER_LIMITS } from "../src/live/hub.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";
import { calls, scripted, text, toolUse } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime;
let mainThread: string;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(() => rt.close());

interface Received {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** A live follower reading the SSE stream as it arrives. */
async function follow(lastEventId?: string) {
  const controller = new AbortController();
  const res = await fetch(`${rt.url}/agents/threads/${mainThread}/events`, {
    signal: controller.signal,
    headers: lastEventId ? { "last-event-id": lastEventId } : {},
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const events: Received[] = [];
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields = Object.fromEntries(
            frame
              .split("\n")
              .filter((l) => !l.startsWith(":") && l.includes(":"))
              .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trimStart()]),
          );
          if (fields.event)
            events.push({ id: String(fields.id), event: fields.event, data: JSON.parse(fields.data ?? "null") });
          cut = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    events,
    until: (check: (e: Received[]) => boolean) => waitFor(() => (check(events) ? true : undefined)),
    async close() {
      controller.abort();
      await reading;
    },
  };
}

const messages = (events: Received[]) => events.filter((e) => e.event === "message").map((e) => e.data.text);

describe("live thread stream", () => {
  it("shows a turn's deltas, steps and messages live, and a webhook delivery as it is posted", async () => {
    rt = await startTestRuntime(fake);
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    mainThread = threads.body.items.find((t) => t.main)?.id as string;
    const live = await follow();
    await waitFor(() => (rt.runtime.deps.live.followers(mainThread) === 1 ? true : undefined));
    fake.respond = () => text("Hello there, friend.");
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "hi" });
    await live.until((e) => messages(e).includes("Hello there, friend."));
    const kinds = live.events.map((e) => e.event);
    expect(kinds[0]).toBe("message");
    expect(live.events[0]?.data).toMatchObject({ role: "user", text: "hi" });
    const deltas = live.events.filter((e) => e.event === "delta").map((e) => e.data.text);
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.join("")).toBe("Hello there, friend.");
    expect(kinds.indexOf("step")).toBeGreaterThan(kinds.lastIndexOf("delta"));
    expect(live.events.find((e) => e.event === "step")?.data).toMatchObject({ step: 1, delivered: true });
    // Ids increase.
    const ids = live.events.map((e) => BigInt(e.id));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);

    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "deploys",
      deliverOnly: true,
      deliverTo: "Chat",
      prompt: "deployed {version}",
    });
    await rt.request("POST", "/agents/webhooks/deploys", { version: "1.2.3" });
    await live.until((e) => messages(e).includes("**Webhook: deploys**\n\ndeployed 1.2.3"));
    await live.close();
  });

  it("shows tool calls and results with verbose on only", async () => {
    rt = await startTestRuntime(fake);
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    mainThread = threads.body.items.find((t) => t.main)?.id as string;
    const live = await follow();
    await waitFor(() => (rt.runtime.deps.live.followers(mainThread) === 1 ? true : undefined));
    fake.respond = scripted([calls(toolUse("list_files", {})), text("quiet")]);
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "one" });
    await live.until((e) => messages(e).includes("quiet"));
    expect(live.events.some((e) => e.event.startsWith("tool_"))).toBe(false);
    expect(live.events.filter((e) => e.event === "step").map((e) => e.data.delivered)).toEqual([false, true]);
    await rt.json("PATCH", "/agents/verbose", { verbose: true });
    fake.respond = scripted([calls(toolUse("list_files", {})), text("loud")]);
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "two" });
    await live.until((e) => messages(e).includes("loud"));
    const call = live.events.find((e) => e.event === "tool_call");
    expect(call?.data).toMatchObject({ name: "list_files", input: {} });
    expect(live.events.find((e) => e.event === "tool_result")?.data).toMatchObject({
      name: "list_files",
      isError: false,
    });
    await live.close();
  });

  it("resumes after a reconnect with Last-Event-ID, without repeating what was seen", async () => {
    rt = await startTestRuntime(fake);
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    mainThread = threads.body.items.find((t) => t.main)?.id as string;
    fake.respond = () => text("first answer");
    const live = await follow();
    await waitFor(() => (rt.runtime.deps.live.followers(mainThread) === 1 ? true : undefined));
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "first" });
    await live.until((e) => messages(e).includes("first answer"));
    const lastSeen = live.events.at(-1)?.id as string;
    await live.close();
    await waitFor(() => (rt.runtime.deps.live.followers(mainThread) === 0 ? true : undefined));

    // Missed while disconnected: a turn and a delivery.
    fake.respond = () => text("second answer");
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "second" });
    const again = await follow(lastSeen);
    await again.until((e) => messages(e).includes("second answer"));
    expect(messages(again.events)).toEqual(["second", "second answer"]);
    expect(again.events.every((e) => BigInt(e.id) > BigInt(lastSeen))).toBe(true);
    // Still live after the replay.
    await rt.json("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "third" });
    await again.until((e) => messages(e).includes("third"));
    await again.close();
    // HEAD answers the headers and follows nothing.
    const head = await rt.request("HEAD", `/agents/threads/${mainThread}/events`);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toContain("text/event-stream");
    await new Promise((r) => setTimeout(r, 100));
    expect(rt.runtime.deps.live.followers(mainThread)).toBe(0);
    const bad = await rt.request("GET", `/agents/threads/${mainThread}/events`, undefined, { "last-event-id": "x" });
    expect(bad.status).toBe(400);
    expect((await rt.request("GET", "/agents/threads/thr_missing/events")).status).toBe(404);
  });

  it("bounds what it keeps for resume, per thread and across threads, however large the messages", async () => {
    rt = await startTestRuntime(fake);
    fake.respond = (body) => text(`echo ${lastUserText(body)}`);
    // One word of 99,000 characters: the user's message, its echo streamed and delivered.
    const big = "x".repeat(99_000);
    const post = (threadId: string) =>
      rt.json("POST", `/agents/threads/${threadId}/messages?stream=false`, { text: big });
    const replayedBytes = async (threadId: string) => {
      mainThread = threadId;
      const replay = await follow("0");
      // The replay is written at once on following; a moment more shows nothing else comes.
      await new Promise((r) => setTimeout(r, 300));
      await replay.close();
      return replay.events.reduce((n, e) => n + JSON.stringify(e.data).length, 0);
    };
    const first = (await rt.json<{ id: string }>("POST", "/agents/threads", {})).body.id;
    for (let i = 0; i < 10; i++) expect((await post(first)).status).toBe(200);
    const kept = await replayedBytes(first);
    expect(kept).toBeGreaterThan(1024 * 1024);
    expect(kept).toBeLessThanOrEqual(LIVE_BUFFER_LIMITS.bytesPerThread);

    // Enough other threads to pass the total: the least recently active thread's replay goes first.
    const perThread = 6;
    const threads = Math.ceil(LIVE_BUFFER_LIMITS.totalBytes / (perThread * 3 * big.length)) + 1;
    for (let t = 0; t < threads; t++) {
      const id = (await rt.json<{ id: string }>("POST", "/agents/threads", {})).body.id;
      for (let i = 0; i < perThread; i++) await post(id);
    }
    expect(rt.runtime.deps.live.bufferedBytes).toBeLessThanOrEqual(LIVE_BUFFER_LIMITS.totalBytes);
    expect(await replayedBytes(first)).toBe(0);
    // The messages themselves are stored as before.
    const stored = await rt.json<{ items: unknown[] }>("GET", `/agents/threads/${first}/messages`);
    expect(stored.body.items).toHaveLength(20);
  }, 120_000);

  it("closes the stream of a follower that stops reading instead of queueing the thread for it", async () => {
    rt = await startTestRuntime(fake);
    fake.respond = (body) => text(`echo ${lastUserText(body)}`);
    const thread = (await rt.json<{ id: string }>("POST", "/agents/threads", {})).body.id;
    const { port } = new URL(rt.url);
    // A follower that reads nothing after its request: what it is sent piles up at the runtime.
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received = (received + chunk).slice(-64);
    });
    socket.on("error", () => {});
    socket.write(`GET /agents/threads/${thread}/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    socket.pause();
    await waitFor(() => (rt.runtime.deps.live.followers(thread) === 1 ? true : undefined));
    const big = "y".repeat(99_000);
    for (let i = 0; i < 60 && rt.runtime.deps.live.followers(thread) > 0; i++)
      await rt.json("POST", `/agents/threads/${thread}/messages?stream=false`, { text: big });
    expect(rt.runtime.deps.live.followers(thread)).toBe(0);
    // What was written before the drop is still there to read, then the stream ends.
    socket.resume();
    await waitFor(() => (received.endsWith("\r\n0\r\n\r\n") ? true : undefined), 20_000);
    socket.destroy();
  }, 120_000);
});
