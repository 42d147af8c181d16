import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

/** A token the operator hands to commands (SHELL_PASS_ENV), as `gh` or `npm publish` would read it. */
const PASSED_TOKEN = "ghp_passed-token-7c41e09b";
/** A passed variable whose name says nothing of a secret: left as it is. */
const PASSED_PLAIN = "/opt/tools/bin-path";

let fake: FakeModel;
let rt: TestRuntime;
let thread: string;

beforeAll(async () => {
  process.env.GH_TOKEN = PASSED_TOKEN;
  process.env.TOOLS_DIR = PASSED_PLAIN;
  fake = await startFakeModel();
  rt = await startTestRuntime(fake, { env: { SHELL_PASS_ENV: "GH_TOKEN,TOOLS_DIR", SHELL_ISOLATION: "off" } });
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  thread = threads.body.items.find((t) => t.main)?.id as string;
});
afterAll(async () => {
  await rt.close();
  await fake.close();
  delete process.env.GH_TOKEN;
  delete process.env.TOOLS_DIR;
});

describe("tool output that carries a credential passed to commands", () => {
  it("is masked before the model or the thread gets it", async () => {
    fake.respond = scripted([
      calls(toolUse("run_command", { command: 'echo "token=$GH_TOKEN dir=$TOOLS_DIR"' })),
      text("printed it"),
    ]);
    const before = fake.requests.length;
    const res = await rt.json("POST", `/agents/threads/${thread}/messages?stream=false`, { text: "print it" });
    expect(res.status).toBe(200);
    const seen = JSON.stringify(fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body)));
    const stored = JSON.stringify(
      await rt.runtime.deps.database.db
        .selectFrom("message")
        .select("content")
        .where("thread_id", "=", thread)
        .where("source", "=", "tool")
        .execute(),
    );
    for (const [where, output] of [
      ["model", seen],
      ["thread", stored],
    ] as const) {
      expect(output, where).toContain("token=[redacted]");
      expect(output, where).not.toContain(PASSED_TOKEN);
      expect(output, where).toContain(`dir=${PASSED_PLAIN}`);
    }
  });
});
