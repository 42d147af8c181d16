import type { RuntimeUsage } from "@agentplane/contracts/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERRUPTED_REASON, modelCallSumsSql } from "../src/usage/store.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime, tempHome, waitFor } from "./support/runtime.ts";
import { scripted, text, toolUse } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  fake.respond = (body) => ({ content: [{ type: "text", text: `done: ${lastUserText(body)}` }] });
  rt = await startTestRuntime(fake);
});
afterAll(async () => {
  await rt?.close();
  await fake?.close();
});

const usage = (query = "") => rt.json<RuntimeUsage>("GET", `/agents/usage${query}`);

async function chat(message: string): Promise<void> {
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const thread = threads.body.items.find((t) => t.main)?.id as string;
  await readSse(await rt.request("POST", `/agents/threads/${thread}/messages`, { text: message }));
}

// The fake model answers every call with 10 input and 5 output tokens; cloud-b's default model
// (claude-sonnet-4-6) lists at $3 and $15 per million: 10·3 + 5·15 = 105 micro-USD a call.
describe("GET /agents/usage", () => {
  it("starts empty: zero totals and no groups", async () => {
    const { status, body } = await usage();
    expect(status).toBe(200);
    expect(body.groupBy).toBe("day");
    expect(body.groups).toEqual([]);
    expect(body.total).toMatchObject({ modelCalls: 0, costMicroUsd: 0, audioInputMinutes: 0 });
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(30 * 86_400_000);
  });

  it("records each model call of a chat turn with its tokens and cost", async () => {
    // One turn of two model calls: a tool call, then the answer.
    fake.respond = scripted([
      { content: [toolUse("update_settings", { verbose: false })], stopReason: "tool_use" },
      text("Done."),
    ]);
    await chat("Keep answers short.");
    const { body } = await usage();
    expect(body.total).toMatchObject({
      modelCalls: 2,
      inputTokens: 20,
      outputTokens: 10,
      costMicroUsd: 210,
      costUsd: 0.00021,
      unpriced: 0,
      voiceSessions: 0,
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(body.groups).toEqual([expect.objectContaining({ key: today, modelCalls: 2, costMicroUsd: 210 })]);
    const bySource = await usage("?groupBy=source");
    expect(bySource.body.groups.map((g) => [g.key, g.modelCalls])).toEqual([["web", 2]]);
    const byModel = await usage("?groupBy=model");
    expect(byModel.body.groups.map((g) => [g.key, g.modelCalls])).toEqual([["claude-sonnet-4-6", 2]]);
    const rows = rt.runtime.deps.database.sqlite
      .prepare("select source, provider, thread_id from model_call_usage")
      .all() as Array<{ source: string; provider: string; thread_id: string }>;
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    expect(rows).toEqual(
      Array(2).fill({ source: "web", provider: "cloud-b", thread_id: threads.body.items.find((t) => t.main)?.id }),
    );
  });

  it("records a webhook run's calls under the webhook source with the run id, and unpriced models apart", async () => {
    fake.respond = (body) => ({ content: [{ type: "text", text: `done: ${lastUserText(body)}` }] });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    expect((await rt.json("POST", "/agents/webhook-subscriptions", { name: "deploys" })).status).toBe(201);
    const accepted = await rt.request("POST", "/agents/webhooks/deploys", { service: "api" });
    const { runId } = (await accepted.json()) as { runId: string };
    const row = await waitFor(
      () =>
        rt.runtime.deps.database.sqlite
          .prepare("select source, run_id from model_call_usage where run_id = ?")
          .get(runId) as { source: string; run_id: string } | undefined,
    );
    expect(row).toEqual({ source: "webhook", run_id: runId });

    // A model the price table does not know: its tokens count, its cost is not guessed.
    expect((await rt.json("PATCH", "/agents/models", { main: "house-model-7" })).status).toBe(200);
    fake.respond = () => text("ok");
    await chat("hello");
    await rt.json("PATCH", "/agents/models", { main: null });
    const bySource = await usage("?groupBy=source");
    expect(bySource.body.groups.map((g) => [g.key, g.modelCalls])).toEqual([
      ["web", 3],
      ["webhook", 1],
    ]);
    const byModel = await usage("?groupBy=model");
    expect(byModel.body.groups.find((g) => g.key === "house-model-7")).toMatchObject({
      modelCalls: 1,
      inputTokens: 10,
      costMicroUsd: 0,
      unpriced: 1,
    });
    expect(byModel.body.total).toMatchObject({ modelCalls: 4, costMicroUsd: 315, unpriced: 1 });
  });

  it("filters by window: calls outside [from, to) are left out", async () => {
    const now = Date.now();
    const before = new Date(now - 3_600_000).toISOString();
    const { body } = await usage(`?from=${before}&to=${encodeURIComponent(new Date(now - 60_000).toISOString())}`);
    expect(body.total.modelCalls).toBe(0);
    expect(body.from).toBe(before);
    const around = await usage(`?from=${before}&to=${new Date(now + 60_000).toISOString()}&groupBy=day`);
    expect(around.body.total.modelCalls).toBe(4);
    // An offset is read as the instant it names.
    const offset = await usage(`?from=${encodeURIComponent(before.replace("Z", "+00:00"))}`);
    expect(offset.body.total.modelCalls).toBe(4);
  });

  it("answers 400 problems for a bad groupBy, a bad timestamp and from after to", async () => {
    for (const [query, pointer] of [
      ["?groupBy=week", "/query/groupBy"],
      ["?from=yesterday", "/query/from"],
      ["?to=2026-13-01T00:00:00Z", "/query/to"],
      ["?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z", "/query/from"],
    ] as const) {
      const res = await rt.request("GET", `/agents/usage${query}`);
      expect(res.status, query).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as { status: number; errors: Array<{ pointer: string }> };
      expect(problem.status).toBe(400);
      expect(problem.errors.map((e) => e.pointer)).toContain(pointer);
    }
  });

  it("reads the window through the time index, not a scan of every call", () => {
    const plan = rt.runtime.deps.database.sqlite
      .prepare(`explain query plan ${modelCallSumsSql("day")}`)
      .all("2026-01-01", "2026-02-01") as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join("\n")).toMatch(/USING INDEX model_call_usage_at/);
  });
});

describe("voice sessions in the usage", () => {
  it("closes a session a stopped runtime left open at its last write, and counts it", async () => {
    const home = tempHome();
    const first = await startTestRuntime(fake, { home });
    const startedAt = new Date().toISOString();
    // What the meeting writes while the call goes on; the process then stops without an end.
    first.runtime.deps.usage.store.saveVoiceSession({
      id: "mtg_cut",
      meetingId: "abc-defg-hij",
      threadId: undefined,
      realtimeModel: "gpt-realtime",
      transcriptionModel: "gpt-4o-transcribe",
      startedAt,
      inputAudioSeconds: 90,
      outputAudioSeconds: 12,
      transcriptionSeconds: 90,
      responses: 2,
      inputTokens: 700,
      outputTokens: 300,
    });
    await first.close();
    const second = await startTestRuntime(fake, { home });
    try {
      const row = second.runtime.deps.database.sqlite
        .prepare("select ended_at, end_reason, updated_at from voice_session_usage where id = 'mtg_cut'")
        .get() as { ended_at: string; end_reason: string; updated_at: string };
      expect(row.end_reason).toBe(INTERRUPTED_REASON);
      expect(row.ended_at).toBe(row.updated_at);
      const bySource = await second.json<RuntimeUsage>("GET", "/agents/usage?groupBy=source");
      expect(bySource.body.groups).toEqual([
        expect.objectContaining({
          key: "voice",
          voiceSessions: 1,
          audioInputMinutes: 1.5,
          audioOutputMinutes: 0.2,
          transcriptionMinutes: 1.5,
          inputTokens: 700,
          outputTokens: 300,
          unpriced: 1,
          costMicroUsd: 0,
        }),
      ]);
      // By model: the audio under the realtime model, the transcription under the transcriber.
      const byModel = await second.json<RuntimeUsage>("GET", "/agents/usage?groupBy=model");
      expect(byModel.body.groups.find((g) => g.key === "gpt-realtime")).toMatchObject({
        voiceSessions: 1,
        audioInputMinutes: 1.5,
        transcriptionMinutes: 0,
      });
      expect(byModel.body.groups.find((g) => g.key === "gpt-4o-transcribe")).toMatchObject({
        voiceSessions: 1,
        audioInputMinutes: 0,
        transcriptionMinutes: 1.5,
      });
      expect(byModel.body.total).toMatchObject({ voiceSessions: 1, unpriced: 1, transcriptionMinutes: 1.5 });
    } finally {
      await second.close();
    }
  });

  it("keeps an ended session as it ended, and deletes records past the retention", async () => {
    const store = rt.runtime.deps.usage.store;
    const old = new Date(Date.now() - 500 * 86_400_000).toISOString();
    const session = {
      id: "mtg_old",
      meetingId: "abc-defg-hij",
      threadId: undefined,
      realtimeModel: "gpt-realtime",
      transcriptionModel: "gpt-4o-transcribe",
      startedAt: old,
      inputAudioSeconds: 60,
      outputAudioSeconds: 6,
      transcriptionSeconds: 60,
      responses: 1,
      inputTokens: 1,
      outputTokens: 1,
    };
    store.saveVoiceSession({ ...session, ended: { at: old, reason: "the meeting ended" } }, old);
    // A late progress write after the end changes nothing.
    store.saveVoiceSession({ ...session, inputAudioSeconds: 999 });
    store.recordModelCall(
      { source: "web", provider: "cloud-b", model: "claude-sonnet-4-6", ...tokens(1) },
      new Date(Date.now() - 401 * 86_400_000).toISOString(),
    );
    const sqlite = rt.runtime.deps.database.sqlite;
    expect(sqlite.prepare("select input_audio_seconds from voice_session_usage where id = 'mtg_old'").get()).toEqual({
      input_audio_seconds: 60,
    });
    expect(store.prune(0)).toEqual({ modelCalls: 0, voiceSessions: 0 });
    expect(store.prune(400)).toEqual({ modelCalls: 1, voiceSessions: 1 });
    expect((await usage()).body.total.modelCalls).toBe(4);
  });
});

function tokens(n: number) {
  return { inputTokens: n, outputTokens: n, cacheReadTokens: 0, cacheWriteTokens: 0 };
}
