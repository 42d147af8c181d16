import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CollectorStandIn, startLangfuse } from "@agentplane/testkit/telemetry";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime } from "./support/runtime.ts";

const KEYS = { publicKey: "pk-lf-test", secretKey: "sk-lf-secret-0123456789" };
const CREDENTIALS = {
  CLOUD_B_API_KEY: "cloudb-key-5f1e2d3c4b5a69788796",
  CHAT_BOT_TOKEN: "xoxb-1111-2222-bot-token-value",
  CHAT_APP_TOKEN: "xapp-1-A000-app-token-value",
  MEETING_BOT_PASSWORD: 'meeting-pass-w0rd-"quoted"',
  VOICE_API_KEY: "voice-key-aabbccddeeff00112233",
};

let fake: FakeModel;
let rt: TestRuntime | undefined;
let langfuse: CollectorStandIn | undefined;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await langfuse?.close();
  langfuse = undefined;
});

describe("LLM tracing and the runtime's credentials", () => {
  it("never exports a credential's value: not from a tool's output, the model's answer or an error", async () => {
    langfuse = await startLangfuse(KEYS);
    const dotenv = Object.entries(CREDENTIALS)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n");
    fake.respond = (body) => {
      const messages = body.messages as Array<{ content: Array<{ type: string }> | string }>;
      const last = messages.at(-1)?.content;
      if (Array.isArray(last) && last.some((b) => b.type === "tool_result")) {
        return { content: [{ type: "text", text: `The bot token is ${CREDENTIALS.CHAT_BOT_TOKEN}.` }] };
      }
      return {
        content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "copy.env" } }],
      };
    };
    rt = await startTestRuntime(fake, {
      teamChat: null,
      env: {
        ...CREDENTIALS,
        TRACING_SECRET_KEY: KEYS.secretKey,
        TRACING_PUBLIC_KEY: KEYS.publicKey,
        TRACING_BASE_URL: langfuse.url,
      },
    });
    const workspace = rt.runtime.deps.config.workspaceRoot;
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "copy.env"), `${dotenv}\nTRACING_SECRET_KEY=${KEYS.secretKey}\n`);
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((x) => x.main)?.id as string;
    const res = await rt.request("POST", `/agents/threads/${main}/messages`, { text: "What is in copy.env?" });
    expect(res.status).toBe(200);
    await readSse(res);
    await rt.close();
    rt = undefined;

    const bodies = langfuse.received.map((r) => r.body.toString("utf8")).join("\n");
    // The trace is there, with the tool call and the answer, only without the values.
    expect(langfuse.spans().some((s) => s.name === "read_file")).toBe(true);
    expect(bodies).toContain("[redacted]");
    expect(bodies).toContain("CHAT_BOT_TOKEN=");
    for (const value of [...Object.values(CREDENTIALS), KEYS.secretKey]) {
      expect(bodies).not.toContain(value);
      expect(bodies).not.toContain(JSON.stringify(value).slice(1, -1));
    }
  });
});
