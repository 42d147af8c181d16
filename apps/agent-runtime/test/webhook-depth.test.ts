import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../src/webhooks/json-depth.ts";
import { PRETTY_LIMIT, prettyJson, RAW_LIMIT, rawPayload, renderPrompt } from "../src/webhooks/template.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

/** `{"a":[[[…]]]}` with `depth` levels in all (the object counts as one). */
const nestedText = (depth: number) => `{"a":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;

describe("deeply nested JSON", () => {
  it("measures nesting without parsing, ignoring brackets inside strings", () => {
    expect(nestsDeeperThan(nestedText(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nestedText(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(`{"s":"${"[".repeat(500)}\\"["}`, 2)).toBe(false);
    expect(nestsDeeperThan(nestedText(100_000), MAX_JSON_DEPTH)).toBe(true);
  });

  it("prints like JSON.stringify(v, null, 2), at any depth, stopping at the limit", () => {
    const samples: unknown[] = [
      { a: 1, b: [1, "two", null, true, { c: [] }, {}], 'quo"te': "line\nbreak ✓", n: -0.5e-7 },
      [],
      {},
      "text",
      42,
      null,
      [[[]], [{}], [[1, [2, [3]]]]],
    ];
    for (const sample of samples) expect(prettyJson(sample).text).toBe(JSON.stringify(sample, null, 2));
    // 100,000 levels: JSON.stringify overflows the stack; the printer does not.
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const raw = rawPayload({ deep });
    expect(raw.length).toBeLessThanOrEqual(RAW_LIMIT + 20);
    expect(raw.endsWith("… (truncated)")).toBe(true);
    expect(renderPrompt("got {__raw__}", { deep } as Record<string, unknown>, "e", "n")).toContain("got {");
  });
});

describe("the receiver bounds the nesting of a body", () => {
  let fake: FakeModel;
  let rt: TestRuntime;
  beforeAll(async () => {
    fake = await startFakeModel();
  });
  afterAll(() => fake.close());
  beforeEach(async () => {
    fake.respond = (body) => ({ content: [{ type: "text", text: `done: ${lastUserText(body)}` }] });
    rt = await startTestRuntime(fake);
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  });
  afterEach(() => rt.close());

  it("answers 400 naming the limit for 100,000 nested arrays, whatever the template or mode", async () => {
    const body = nestedText(100_000);
    expect(body.length).toBeGreaterThan(190_000);
    for (const sub of [
      { name: "raw", deliverOnly: true, prompt: "{__raw__}" },
      { name: "empty", deliverOnly: true, prompt: "" },
      { name: "agent", deliverOnly: false, prompt: "{__raw__}" },
    ]) {
      expect((await rt.json("POST", "/agents/webhook-subscriptions", sub)).status).toBe(201);
      const res = await rt.request("POST", `/agents/webhooks/${sub.name}`, body);
      expect(res.status, sub.name).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toContain(String(MAX_JSON_DEPTH));
    }
  });

  it("delivers a body at the limit through {__raw__}", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "raw", deliverOnly: true, prompt: "{__raw__}" });
    const res = await rt.request("POST", "/agents/webhooks/raw", nestedText(MAX_JSON_DEPTH));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "delivered" });
  });

  it("gives an empty template the whole payload without printing it at many times its size", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "whole",
      deliverOnly: true,
      deliverTo: "Chat",
      prompt: "",
    });
    // Under 1 MiB, 62 arrays deep: printed with indentation, every zero would take 130 characters.
    const zeros = 450_000;
    const inner = `${"0,".repeat(zeros - 1)}0`;
    const body = `{"a":${"[".repeat(62)}${inner}${"]".repeat(62)}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const res = await rt.request("POST", "/agents/webhooks/whole", body);
    expect(res.status).toBe(200);
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((t) => t.main)?.id as string;
    const messages = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`);
    const posted = messages.body.items.at(-1)?.text ?? "";
    expect(posted.length).toBeLessThan(2 * body.length);
    // Still the whole payload.
    const json = posted.slice(posted.indexOf("```json\n") + 8, posted.lastIndexOf("\n```"));
    expect(json).toBe(body);
    // A payload of ordinary shape is still printed with indentation.
    await rt.request("POST", "/agents/webhooks/whole", { alert: { name: "disk", value: 93 } });
    const after = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`);
    expect(after.body.items.at(-1)?.text).toContain('{\n  "alert": {\n    "name": "disk",');
  });

  it("bounds what a template's placeholders insert in all, however often one repeats", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "repeats",
      deliverOnly: true,
      deliverTo: "Chat",
      prompt: `{note} {list}\n${"{list}".repeat(200)}`,
    });
    // Each {list} is about 900 KB of JSON: 200 of them would make a 180 MB message.
    const body = JSON.stringify({ note: "short", list: Array.from({ length: 100_000 }, (_, i) => i) });
    expect(body.length).toBeLessThan(1024 * 1024);
    const res = await rt.request("POST", "/agents/webhooks/repeats", body);
    expect(res.status).toBe(200);
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((t) => t.main)?.id as string;
    const messages = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`);
    const posted = messages.body.items.at(-1)?.text ?? "";
    expect(posted.length).toBeLessThan(PRETTY_LIMIT + 10_000);
    expect(posted).toContain("short [0,1,2,3,");
    expect(posted).toContain("… (truncated)");
  });
});
