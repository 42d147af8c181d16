import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ContextWindowCatalog } from "../src/context/catalog.ts";
import { runAgentTurn } from "../src/services/agent-turns.ts";
import { teamChatThread } from "../src/services/threads.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { calls, scripted, text, toolUse } from "./support/script.ts";

let fake: FakeModel;
let modelsDev: LocalServer;
let rt: TestRuntime | undefined;
let catalogRequests = 0;

beforeAll(async () => {
  fake = await startFakeModel();
  modelsDev = await startLocalServer((_req, res) => {
    catalogRequests += 1;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        anthropic: {
          id: "anthropic",
          models: { "tiny-model": { id: "tiny-model", limit: { context: 20, output: 8 } } },
        },
        other: { models: { "claude-sonnet-4-6": { id: "claude-sonnet-4-6", limit: { context: 1_000_000 } } } },
      }),
    );
  });
});
afterAll(async () => {
  await fake.close();
  await modelsDev.close();
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

describe("context-window catalog", () => {
  it("knows the providers' ids bare, prefixed, versioned and as default deployment names", () => {
    const catalog = new ContextWindowCatalog();
    for (const id of [
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "global.anthropic.claude-haiku-4-5-20251001-v1:0",
      "anthropic.claude-3-7-sonnet-20250219-v1:0",
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "claude-sonnet-4-6",
      "claude-opus-4-1-20250805",
    ]) {
      expect([id, catalog.windowOf(id)]).toEqual([id, 200_000]);
    }
    expect(catalog.windowOf("us.amazon.nova-pro-v1:0")).toBe(300_000);
    expect(catalog.windowOf("my-renamed-deployment")).toBeNull();
    expect(new ContextWindowCatalog(64_000).windowOf("my-renamed-deployment")).toBe(64_000);
    expect(new ContextWindowCatalog(64_000).windowOf("claude-sonnet-4-5")).toBe(200_000);
  });

  it("is refreshed once at start from MODELS_DEV_URL; unknown models report contextWindow null", async () => {
    const before = catalogRequests;
    rt = await startTestRuntime(fake, { env: { MODELS_DEV_URL: modelsDev.url, CLOUD_B_MODEL_ID: "tiny-model" } });
    expect(catalogRequests).toBe(before + 1);
    expect((await rt.json("GET", "/agents/profile")).body.contextWindow).toBe(20);
    await rt.json("PATCH", "/agents/models", { main: "claude-sonnet-4-6" });
    expect((await rt.json("GET", "/agents/profile")).body.contextWindow).toBe(1_000_000);
    await rt.json("PATCH", "/agents/models", { main: "renamed-deployment" });
    expect((await rt.json("GET", "/agents/profile")).body.contextWindow).toBeNull();
    const threads = await rt.json<{ items: Array<{ contextWindow: number | null }> }>("GET", "/agents/threads");
    expect(threads.body.items[0]?.contextWindow).toBeNull();
    expect(catalogRequests).toBe(before + 1);
  });

  it("keeps the bundled catalog when the refresh fails, and logs why", async () => {
    const { logger, records } = capturingLogger();
    rt = await startTestRuntime(fake, { logger, env: { MODELS_DEV_URL: `${fake.url}/no-such-catalog` } });
    expect((await rt.json("GET", "/agents/profile")).body.contextWindow).toBe(200_000);
    expect(records.some((r) => String(r.msg).startsWith("context-window catalog refresh failed"))).toBe(true);
  });
});

describe("compaction", () => {
  let mainThread: string;
  const summarizerCalls: Array<{ system: string; prompt: string }> = [];

  async function start(env: Record<string, string> = {}) {
    rt = await startTestRuntime(fake, {
      env: {
        MODELS_DEV_URL: modelsDev.url,
        CLOUD_B_MODEL_ID: "tiny-model",
        COMPACTION_THRESHOLD_PERCENT: "70",
        COMPACTION_TAIL_MESSAGES: "2",
        ...env,
      },
    });
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    mainThread = threads.body.items.find((t) => t.main)?.id as string;
    summarizerCalls.length = 0;
    let n = 0;
    fake.respond = (body) => {
      if (String(body.system).startsWith("You compact")) {
        n += 1;
        summarizerCalls.push({ system: String(body.system), prompt: lastUserText(body) });
        return text(`SUMMARY-${n}`);
      }
      return text(`echo: ${lastUserText(body)}`);
    };
  }

  async function say(message: string) {
    const res = await rt?.json<{ delivered: Array<{ text: string }> }>(
      "POST",
      `/agents/threads/${mainThread}/messages?stream=false`,
      { text: message },
    );
    return res?.body.delivered.map((m) => m.text) ?? [];
  }

  it("compacts past the threshold into one rolling summary, keeping the tail and the stored messages", async () => {
    // The fake model reports 15 tokens per call: 75 % of the catalog's 20-token window.
    await start();
    await say("first question");
    expect(summarizerCalls).toHaveLength(0); // 2 messages: nothing older than the tail
    await say("second question");
    expect(summarizerCalls).toHaveLength(1);
    expect(summarizerCalls[0]?.prompt).toContain("user: first question");
    expect(summarizerCalls[0]?.prompt).not.toContain("second question");

    const before = fake.requests.length;
    await say("third question");
    const sent = fake.requests[before]?.body.messages as Array<{ role: string; content: Array<{ text?: string }> }>;
    const flat = JSON.stringify(sent);
    expect(sent[0]?.content[0]?.text).toContain("SUMMARY-1");
    expect(flat).not.toContain("first question");
    expect(flat).toContain("second question");
    // The third turn compacted again: the new summary absorbed the previous one.
    expect(summarizerCalls).toHaveLength(2);
    expect(summarizerCalls[1]?.prompt).toContain("Summary so far:\nSUMMARY-1");
    const contexts = await rt?.runtime.deps.database.db.selectFrom("thread_context").selectAll().execute();
    expect(contexts).toHaveLength(1);
    expect(contexts?.[0]).toMatchObject({ summary: "SUMMARY-2", compactions: 2 });

    // Every original message is still shown.
    const shown = await rt?.json<{ items: unknown[] }>("GET", `/agents/threads/${mainThread}/messages`);
    expect(shown?.body.items).toHaveLength(6);
    // Right after a compaction the context is only the tail: /compact has nothing to do.
    expect(await say("/compact")).toEqual([
      expect.stringMatching(/^Nothing to compact: the conversation was already compacted/),
    ]);
    expect(summarizerCalls).toHaveLength(2);
  });

  it("does not compact with the threshold at 0 or an unknown window", async () => {
    await start({ COMPACTION_THRESHOLD_PERCENT: "0" });
    for (const m of ["a", "b", "c"]) await say(m);
    expect(summarizerCalls).toHaveLength(0);
    await rt?.close();
    await start({ CLOUD_B_MODEL_ID: "unknown-deployment" });
    for (const m of ["a", "b", "c"]) await say(m);
    expect(summarizerCalls).toHaveLength(0);
  });

  it("/compact runs on demand with a focus, never splitting a tool call from its result", async () => {
    await start({ COMPACTION_THRESHOLD_PERCENT: "0" });
    expect(await say("/compact")).toEqual([
      "Nothing to compact: this conversation has 0 messages, no more than the 2 newest kept verbatim.",
    ]);
    await say("hello");
    fake.respond = scripted([calls(toolUse("list_files", {})), text("listed")]);
    await say("list my files");
    const respond = fake.respond;
    fake.respond = (body, request) => {
      if (!String(body.system).startsWith("You compact")) return respond(body, request);
      summarizerCalls.push({ system: String(body.system), prompt: lastUserText(body) });
      return text("FOCUSED");
    };
    const answer = await say("/compact deployments only");
    expect(answer[0]).toMatch(/^Compacted 3 older messages/);
    // hello, its answer, "list my files" are folded; the tool call and its result stay in the tail together.
    expect(summarizerCalls[0]?.prompt).toContain("Focus the summary on: deployments only");
    expect(summarizerCalls[0]?.prompt).toContain("user: list my files");
    expect(summarizerCalls[0]?.prompt).not.toContain("assistant called list_files");
    const before = fake.requests.length;
    fake.respond = () => text("ok");
    await say("next");
    const sent = fake.requests[before]?.body.messages as Array<{ role: string; content: Array<{ type: string }> }>;
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(sent[1]?.content.some((b) => b.type === "tool_use")).toBe(true);
    expect(sent[2]?.content.some((b) => b.type === "tool_result")).toBe(true);
    expect(JSON.stringify(sent)).not.toContain("/compact");
  });

  it("leaves team-chat threads alone", async () => {
    await start();
    const deps = rt?.runtime.deps;
    if (!deps) throw new Error("no runtime");
    const thread = await teamChatThread(deps.database.db, "D123");
    for (const m of ["a", "b", "c"]) await runAgentTurn(deps, { threadId: thread.id, text: m, source: "team-chat" });
    expect(summarizerCalls).toHaveLength(0);
  });
});
