import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, lastUserText, type Reply, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;
let mainThread: string;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  rt = await startTestRuntime(fake);
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  mainThread = threads.body.items.find((t) => t.main)?.id as string;
});
afterEach(() => rt.close());

/** A two-step turn: a text step with a tool call, then the final answer. */
function multiStep(toolInput: Record<string, unknown> = {}): (body: Record<string, unknown>) => Reply {
  return (body) => {
    const messages = body.messages as Array<{ role: string; content: Array<{ type: string }> }>;
    const last = messages[messages.length - 1];
    if (last?.content.some((b) => b.type === "tool_result")) {
      return { content: [{ type: "text", text: "Final answer." }] };
    }
    return {
      content: [
        { type: "text", text: "Let me check my settings first." },
        { type: "tool_use", id: `toolu_${messages.length}`, name: "update_settings", input: toolInput },
      ],
    };
  };
}

function lastToolResult(): Record<string, unknown> | undefined {
  const messages = (fake.requests.at(-1)?.body.messages ?? []) as Array<{ content: Array<Record<string, unknown>> }>;
  return messages.at(-1)?.content.find((b) => b.type === "tool_result");
}

async function postStreamed(text: string) {
  const res = await rt.request("POST", `/agents/threads/${mainThread}/messages`, { text });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  return readSse(res);
}

async function visibleTexts(): Promise<string[]> {
  const { body } = await rt.json<{ items: Array<{ role: string; text: string }> }>(
    "GET",
    `/agents/threads/${mainThread}/messages`,
  );
  return body.items.map((m) => `${m.role}: ${m.text}`);
}

describe("verbose off", () => {
  it("delivers only the last text step, live and on reload, while storing every step", async () => {
    fake.respond = multiStep();
    const events = await postStreamed("How are you set up?");
    const messages = events.filter((e) => e.event === "message").map((e) => JSON.parse(e.data).text);
    expect(messages).toEqual(["Final answer."]);
    expect(JSON.parse(events.at(-1)?.data ?? "{}")).toMatchObject({ delivered: 1, steps: 2 });
    expect(await visibleTexts()).toEqual(["user: How are you set up?", "assistant: Final answer."]);
    const stored = await rt.runtime.deps.database.db
      .selectFrom("message")
      .select(["text", "internal", "role"])
      .where("thread_id", "=", mainThread)
      .orderBy("seq")
      .execute();
    expect(stored).toEqual([
      { role: "user", text: "How are you set up?", internal: 0 },
      { role: "assistant", text: "Let me check my settings first.", internal: 1 },
      { role: "user", text: "", internal: 1 },
      { role: "assistant", text: "Final answer.", internal: 0 },
    ]);
  });

  it("sends every stored step, internal ones included, to the model on the next turn", async () => {
    fake.respond = multiStep();
    await postStreamed("first");
    fake.respond = (body) => ({ content: [{ type: "text", text: `seen ${(body.messages as unknown[]).length}` }] });
    const before = fake.requests.length;
    await postStreamed("second");
    const history = fake.requests[before]?.body.messages as Array<{ role: string }>;
    // user, assistant(text+tool_use), user(tool_result), assistant(final) + user(second), merged by role.
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(lastUserText(fake.requests[before]?.body ?? {})).toBe("second");
  });
});

describe("verbose on", () => {
  it("delivers every text step as it arrives and shows them on reload", async () => {
    await rt.json("PATCH", "/agents/verbose", { verbose: true });
    fake.respond = multiStep();
    const events = await postStreamed("Check please");
    expect(events.filter((e) => e.event === "message").map((e) => JSON.parse(e.data).text)).toEqual([
      "Let me check my settings first.",
      "Final answer.",
    ]);
    expect(await visibleTexts()).toEqual([
      "user: Check please",
      "assistant: Let me check my settings first.",
      "assistant: Final answer.",
    ]);
  });
});

describe("settings-update tool", () => {
  it("lets the agent switch verbose and set model overrides when asked", async () => {
    fake.respond = multiStep({ verbose: true, mainModel: "deploy-x", cronModel: "" });
    const res = await rt.json<{ delivered: Array<{ text: string }> }>(
      "POST",
      `/agents/threads/${mainThread}/messages?stream=false`,
      { text: "Be verbose and use deploy-x" },
    );
    expect(res.status).toBe(200);
    expect(res.body.delivered.map((m) => m.text)).toEqual(["Final answer."]);
    const { body: profile } = await rt.json("GET", "/agents/profile");
    expect(profile).toMatchObject({ verbose: true, overrides: { main: "deploy-x", cron: null } });
    const toolResult = lastToolResult();
    expect(toolResult?.is_error).toBe(false);
    // The next turn runs on the new main model.
    fake.respond = () => ({ content: [{ type: "text", text: "ok" }] });
    await postStreamed("next");
    expect(fake.requests.at(-1)?.body.model).toBe("deploy-x");
  });

  it("reports invalid tool input back to the model as an error result", async () => {
    fake.respond = multiStep({ verbose: "loud" });
    await postStreamed("x");
    const toolResult = lastToolResult();
    expect(toolResult?.is_error).toBe(true);
    expect((await rt.json("GET", "/agents/profile")).body.verbose).toBe(false);
  });
});

describe("model failures", () => {
  it("answers 502 without streaming and an SSE error event when streaming", async () => {
    fake.respond = () => ({ content: [], status: 500 });
    const plain = await rt.request("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "hi" });
    expect(plain.status).toBe(502);
    expect(plain.headers.get("content-type")).toContain("application/problem+json");
    const events = await postStreamed("hi again");
    expect(events.map((e) => e.event)).toEqual(["error"]);
  });

  it("says in words why a model call failed: the gateway's problem detail, the provider's message", async () => {
    const detail = "No credential for cloud-a: set CLOUD_A_BEARER_TOKEN in the control plane's environment and restart";
    fake.respond = () => ({
      content: [],
      status: 400,
      errorBody: { type: "https://agentplane.dev/problems/bad-request", title: "Bad Request", status: 400, detail },
    });
    const [problem] = await postStreamed("hi");
    expect(problem?.event).toBe("error");
    expect(JSON.parse(problem!.data).detail).toBe(`The turn failed: the model call answered 400: ${detail}`);
    fake.respond = () => ({ content: [], status: 400 });
    const plain = await rt.request("POST", `/agents/threads/${mainThread}/messages?stream=false`, { text: "hi" });
    expect(((await plain.json()) as { detail: string }).detail).toBe(
      "The turn failed: the model call answered 400: fake failure",
    );
  });

  it("rejects an empty message with a 400 problem", async () => {
    const res = await rt.request("POST", `/agents/threads/${mainThread}/messages`, { text: "" });
    expect(res.status).toBe(400);
  });
});
