import { MAX_PENDING_WEBHOOK_RUNS } from "@agentplane/contracts/runtime";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_LISTED_TEXT } from "../src/routes/threads/list-messages.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  rt = await startTestRuntime(fake);
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
});
afterEach(() => rt.close());

/** A JSON object of about `size` bytes, streamed with chunked transfer encoding (no Content-Length). */
function chunkedJson(size: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sent = 0;
  let opened = false;
  return new ReadableStream({
    pull(controller) {
      if (!opened) {
        opened = true;
        controller.enqueue(encoder.encode('{"pad":"'));
        return;
      }
      if (sent >= size) {
        controller.enqueue(encoder.encode('"}'));
        controller.close();
        return;
      }
      const n = Math.min(64 * 1024, size - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x61));
    },
  });
}

const postChunked = (name: string, size: number) =>
  fetch(`${rt.url}/agents/webhooks/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: chunkedJson(size),
    duplex: "half",
  } as RequestInit);

describe("runtime HTTP edge", () => {
  it("counts a chunked webhook body as it streams: 413 problem past 1 MiB, accepted below", async () => {
    expect((await rt.json("POST", "/agents/webhook-subscriptions", { name: "big" })).status).toBe(201);
    const big = await postChunked("big", 10 * 1024 * 1024);
    expect(big.status).toBe(413);
    expect(big.headers.get("content-type")).toBe("application/problem+json");
    expect(((await big.json()) as { type: string }).type).toMatch(/payload-too-large$/);
    const small = await postChunked("big", 100 * 1024);
    expect(small.status).toBe(202);
  });

  it("bounds every API body: a chunked one is cut off with a 413 problem, a declared one refused at once", async () => {
    for (const [method, path] of [
      ["POST", "/agents/threads"],
      ["PATCH", "/agents/verbose"],
      ["POST", "/agents/webhook-subscriptions"],
    ]) {
      const res = await fetch(`${rt.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: chunkedJson(256 * 1024 * 1024),
        duplex: "half",
      } as RequestInit);
      expect(res.status, path).toBe(413);
      expect(res.headers.get("content-type"), path).toBe("application/problem+json");
      expect(((await res.json()) as { type: string }).type, path).toMatch(/payload-too-large$/);
    }
    const declared = await rt.request(
      "POST",
      "/agents/threads",
      JSON.stringify({ title: "x".repeat(2 * 1024 * 1024) }),
    );
    expect(declared.status).toBe(413);
    // Bodies of a normal size, chunked or not, are read as before.
    const small = new Blob(['{"verbose":true}']).stream();
    const chunked = await fetch(`${rt.url}/agents/verbose`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: small,
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(200);
    expect(((await chunked.json()) as { verbose: boolean }).verbose).toBe(true);
    expect((await rt.json("PATCH", "/agents/verbose", { verbose: false })).status).toBe(200);
  });

  it("answers a JSON route sent another media type with a 415 problem of that type", async () => {
    const res = await rt.request("POST", "/agents/threads", '{"title":"x"}', { "content-type": "text/plain" });
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({
      type: expect.stringMatching(/\/unsupported-media-type$/),
      title: "Unsupported Media Type",
      status: 415,
    });
  });

  it("lists a thread's newest messages up to a bound of text, however much it holds", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "bulky",
      deliverOnly: true,
      deliverTo: "Chat",
      prompt: "{n} {pad}",
    });
    // Unsigned deliveries of about 1 MB each, all posted to the main thread.
    const pad = "p".repeat(1_000_000);
    const deliveries = Math.ceil(MAX_LISTED_TEXT / pad.length) + 3;
    for (let n = 0; n < deliveries; n++) {
      expect((await rt.request("POST", "/agents/webhooks/bulky", { n, pad })).status).toBe(200);
    }
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((t) => t.main)?.id as string;
    const listed = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`);
    const total = listed.body.items.reduce((n, m) => n + m.text.length, 0);
    expect(total).toBeLessThanOrEqual(MAX_LISTED_TEXT);
    expect(listed.body.items.length).toBeGreaterThan(1);
    // The newest ones, oldest first.
    const numbers = listed.body.items.map((m) => Number(/\*\*\n\n(\d+) /.exec(m.text)?.[1]));
    expect(numbers.at(-1)).toBe(deliveries - 1);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  });

  it("answers 429 with Retry-After when a subscription's queue is full", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    fake.respond = async () => {
      await held;
      return { content: [{ type: "text", text: "ok" }] };
    };
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "queue", deliverTo: "Chat" });
    let limited: Response | undefined;
    for (let i = 0; i < MAX_PENDING_WEBHOOK_RUNS + 3 && !limited; i++) {
      const res = await rt.request("POST", "/agents/webhooks/queue", { i });
      if (res.status === 429) limited = res;
      else await res.body?.cancel();
    }
    release();
    expect(limited?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(limited?.headers.get("content-type")).toBe("application/problem+json");
  });

  it("answers unknown paths, a trailing slash included, with a 404 problem", async () => {
    for (const path of ["/agents/threads/", "/nope"]) {
      const res = await rt.request("GET", path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toBe("application/problem+json");
    }
  });

  it("lists the webhook receiver in its OpenAPI document", async () => {
    const res = await rt.request("GET", "/openapi.json");
    const doc = (await res.json()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    expect(doc.paths["/agents/webhooks/{name}"]?.post?.operationId).toBe("receiveWebhook");
    // The receiver still answers on the hot path as before.
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "doc", deliverTo: "Chat" });
    const accepted = await rt.request("POST", "/agents/webhooks/doc", { hello: "world" });
    expect(accepted.status).toBe(202);
  });

  it("documents no authentication and, per operation, only the problems it answers", async () => {
    type Op = { operationId: string; security?: unknown; responses: Record<string, { content?: object }> };
    const doc = await rt.json<{ paths: Record<string, Record<string, Op>>; components?: Record<string, unknown> }>(
      "GET",
      "/openapi.json",
    );
    // The platform routing in front of the runtime authenticates; the runtime asks for nothing.
    expect(doc.body.components?.securitySchemes).toBeUndefined();
    const ops = Object.values(doc.body.paths).flatMap((item) => Object.values(item));
    expect(ops.length).toBeGreaterThan(20);
    for (const op of ops) expect(op.security, op.operationId).toBeUndefined();
    const post = doc.body.paths["/agents/threads/{threadId}/messages"]?.post;
    expect(Object.keys(post?.responses ?? {})).toEqual(["200", "400", "404", "429", "502"]);
    // Both bounded by the runtime (turns in flight, open streams): a 429 is part of their contract.
    expect(Object.keys(doc.body.paths["/agents/threads/{threadId}/events"]?.get?.responses ?? {})).toContain("429");
    expect(Object.keys(post?.responses["502"]?.content ?? {})).toEqual(["application/problem+json"]);
    expect(Object.keys(doc.body.paths["/agents/threads"]?.get?.responses ?? {})).toEqual(["200", "400"]);
  });
});
