import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

/** The runtime's model key, and a credential too short to mask without garbling ordinary text. */
const MODEL_KEY = "sk-model-key-3f9a1c77e2";
const SHORT = "pw12345";
const WEBHOOK_SECRET = "hook-signing-secret-81d0";

let fake: FakeModel;
let rt: TestRuntime;
let thread: string;

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake, {
    env: { CLOUD_B_API_KEY: MODEL_KEY, MEETING_BOT_PASSWORD: SHORT, SHELL_ISOLATION: "off" },
  });
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  thread = threads.body.items.find((t) => t.main)?.id as string;
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

describe("tool output that carries the runtime's secrets", () => {
  it("is masked before the thread stores it, the live view shows it or the model gets it", async () => {
    // Verbose on: followers of the thread see tool results as they come.
    await rt.json("PATCH", "/agents/verbose", { verbose: true });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    const created = await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "ci",
      prompt: "CI says {status}",
      verification: { kind: "github", secret: WEBHOOK_SECRET },
    });
    expect(created.status).toBe(201);
    // A file in the workspace that holds them, as a copied config would.
    writeFileSync(
      join(rt.runtime.deps.config.workspaceRoot, "config.txt"),
      `key=${MODEL_KEY}\nhook=${WEBHOOK_SECRET}\nshort=${SHORT}\n`,
    );
    const live: string[] = [];
    rt.runtime.deps.live.follow(thread, (event) => live.push(JSON.stringify(event)));
    fake.respond = scripted([
      calls(
        toolUse("run_command", { command: "cat config.txt; echo done" }),
        toolUse("read_file", { path: "config.txt" }),
      ),
      text("read it"),
    ]);
    const before = fake.requests.length;
    const res = await rt.json("POST", `/agents/threads/${thread}/messages?stream=false`, { text: "show the config" });
    expect(res.status).toBe(200);

    const seen = fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body));
    expect(seen).toHaveLength(2);
    const stored = await rt.runtime.deps.database.db
      .selectFrom("message")
      .select("content")
      .where("thread_id", "=", thread)
      .where("source", "=", "tool")
      .execute();
    const streamed = live.filter((event) => event.includes("tool_result"));
    expect(streamed).toHaveLength(2);
    for (const [where, text] of [
      ["model", JSON.stringify(seen)],
      ["thread", JSON.stringify(stored)],
      ["live", streamed.join("\n")],
    ] as const) {
      expect(text, where).toContain("key=[redacted]");
      expect(text, where).toContain("hook=[redacted]");
      expect(text, where).not.toContain(MODEL_KEY);
      expect(text, where).not.toContain(WEBHOOK_SECRET);
      // Values under 8 characters are left as they are.
      expect(text, where).toContain(`short=${SHORT}`);
      expect(text, where).toContain("done");
    }
  });
});
