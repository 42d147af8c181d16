import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

const MODEL_KEY = "sk-model-key-0c9e3a71";

let fake: FakeModel;
let rt: TestRuntime;
let mainThread: string;

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake, { env: { CLOUD_B_API_KEY: MODEL_KEY } });
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  mainThread = threads.body.items.find((t) => t.main)?.id as string;
  // A provider (or a proxy in front of it) that quotes the key it was sent back in its error.
  fake.respond = () => ({
    content: [],
    status: 401,
    errorBody: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${MODEL_KEY}` } },
  });
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

describe("a model error that quotes the runtime's key", () => {
  it("answers a chat turn's 502 problem with the key redacted", async () => {
    const res = await rt.request("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "hi" });
    expect(res.status).toBe(502);
    const problem = (await res.json()) as { detail: string };
    expect(problem.detail).toBe("The turn failed: the model call answered 401: invalid x-api-key: [redacted]");
  });

  it("sends a streamed turn's error event with the key redacted", async () => {
    const events = await readSse(await rt.request("POST", `/agents/threads/${mainThread}/messages`, { text: "hi" }));
    expect(events.map((e) => e.event)).toEqual(["error"]);
    expect(events[0]?.data).not.toContain(MODEL_KEY);
    expect(events[0]?.data).toContain("[redacted]");
  });

  it("keeps a failed webhook run's error with the key redacted", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "alerts", deliverTo: "Chat" });
    expect((await rt.request("POST", "/agents/webhooks/alerts", { alert: "disk" })).status).toBe(202);
    const run = await waitFor(async () => {
      const { body } = await rt.json<{ items: Array<{ status: string; error: string | null }> }>(
        "GET",
        "/agents/webhook-subscriptions/alerts/runs",
      );
      return body.items.find((r) => r.status === "failed");
    });
    expect(run.error).toContain("[redacted]");
    expect(run.error).not.toContain(MODEL_KEY);
  });

  it("keeps a failed scheduled run's error with the key redacted", async () => {
    const created = await rt.json<{ id: string }>("POST", "/agents/schedules", {
      name: "daily",
      prompt: "report",
      everySeconds: 86_400,
    });
    expect((await rt.request("POST", `/agents/schedules/${created.body.id}/run`)).status).toBe(202);
    const run = await waitFor(async () => {
      const { body } = await rt.json<{ items: Array<{ status: string; error: string | null }> }>(
        "GET",
        `/agents/schedules/${created.body.id}/runs`,
      );
      return body.items.find((r) => r.status === "failed");
    });
    expect(run.error).toContain("[redacted]");
    expect(run.error).not.toContain(MODEL_KEY);
  });
});
