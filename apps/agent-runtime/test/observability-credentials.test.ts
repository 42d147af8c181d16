import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CollectorStandIn, startLangfuse } from "@agentplane/testkit/telemetry";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

const KEYS = { publicKey: "pk-lf-test", secretKey: "sk-lf-secret-0123456789" };
const CREDENTIALS = {
  CLOUD_B_API_KEY: "cloudb-key-5f1e2d3c4b5a69788796",
  CHAT_BOT_TOKEN: "xoxb-1111-2222-bot-token-value",
  CHAT_APP_TOKEN: "xapp-1-A000-app-token-value",
  MEETING_BOT_PASSWORD: 'meeting-pass-w0rd-"quoted"',
  VOICE_API_KEY: "voice-key-aabbccddeeff00112233",
  // A URL-valued variable with a password in it (a control plane behind basic auth).
  AGENTPLANE_API_URL: "https://agent:url-pass%2Fw0rd-7c6b5a@cp.example.test/",
};
/** What each credential is as it can show up: the URL's password, decoded, is the credential there. */
const LEAKS = [...Object.values(CREDENTIALS), "url-pass%2Fw0rd-7c6b5a", "url-pass/w0rd-7c6b5a"];

/** `value` as written, then as JSON escapes it once, twice and three times. */
function escapings(value: string): string[] {
  const forms = [value];
  for (let i = 0; i < 3; i++) forms.push(JSON.stringify(forms.at(-1)).slice(1, -1));
  return forms;
}

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
    writeFileSync(
      join(workspace, "copy.env"),
      `${dotenv}\nTRACING_SECRET_KEY=${KEYS.secretKey}\nCP_PASSWORD=url-pass/w0rd-7c6b5a\n`,
    );
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
    // The export is JSON, whose attributes are JSON (a model call's input), whose strings can be
    // JSON again (a tool's output): a value with a quote in it shows escaped up to three times.
    for (const value of [...LEAKS, KEYS.secretKey])
      for (const form of escapings(value)) expect(bodies).not.toContain(form);
  });

  it("never exports part of a credential from an error message cut at its length limit", async () => {
    langfuse = await startLangfuse(KEYS);
    const key = CREDENTIALS.CLOUD_B_API_KEY;
    // A provider that quotes the key back in its error, so often that one copy straddles the cut.
    fake.respond = () => ({
      content: [],
      status: 400,
      errorBody: {
        type: "error",
        error: { type: "invalid_request_error", message: `invalid key: ${Array(40).fill(key).join(" ~ ")}` },
      },
    });
    rt = await startTestRuntime(fake, {
      teamChat: null,
      env: {
        ...CREDENTIALS,
        TRACING_SECRET_KEY: KEYS.secretKey,
        TRACING_PUBLIC_KEY: KEYS.publicKey,
        TRACING_BASE_URL: langfuse.url,
      },
    });
    const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads.body.items.find((x) => x.main)?.id as string;
    await readSse(await rt.request("POST", `/agents/threads/${main}/messages`, { text: "Hello?" }));
    await rt.close();
    rt = undefined;

    const bodies = langfuse.received.map((r) => r.body.toString("utf8")).join("\n");
    expect(bodies).toContain("invalid key: [redacted]");
    // What is left of the key once every whole copy is redacted: nothing, not even its first characters.
    expect(bodies.replaceAll("[redacted]", "")).not.toContain(key.slice(0, 6));
  });

  it("never exports a webhook subscription's verification secret, set or rotated while the runtime runs", async () => {
    langfuse = await startLangfuse(KEYS);
    const first = "whsec-first-0a1b2c3d4e5f";
    const rotated = "whsec-rotated-9f8e7d6c5b4a";
    // The model repeats what it was given, the secret with it.
    fake.respond = (body) => {
      const messages = body.messages as Array<{ content: Array<{ type: string; text?: string }> | string }>;
      const last = messages.at(-1)?.content;
      const said = typeof last === "string" ? last : (last?.map((b) => b.text ?? "").join(" ") ?? "");
      return { content: [{ type: "text", text: `Got it: ${said}` }] };
    };
    rt = await startTestRuntime(fake, {
      teamChat: null,
      env: { TRACING_SECRET_KEY: KEYS.secretKey, TRACING_PUBLIC_KEY: KEYS.publicKey, TRACING_BASE_URL: langfuse.url },
    });
    const runtime = rt;
    await runtime.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    const created = await runtime.json("POST", "/agents/webhook-subscriptions", {
      name: "chatops",
      deliverTo: "Chat",
      prompt: "",
      verification: { kind: "bearer", secret: first },
    });
    expect(created.status).toBe(201);
    const updated = await runtime.json("PATCH", "/agents/webhook-subscriptions/chatops", {
      verification: { kind: "bearer", secret: rotated },
    });
    expect(updated.status).toBe(200);
    // An outgoing-webhook style sender that puts its token in the payload too.
    const res = await runtime.request(
      "POST",
      "/agents/webhooks/chatops",
      JSON.stringify({ token: rotated, text: "deploy api to staging" }),
      { "content-type": "application/json", authorization: `Bearer ${rotated}`, "x-github-event": "command" },
    );
    expect(res.status).toBe(202);
    await waitFor(async () => {
      const runs = await runtime.json<{ items: Array<{ status: string }> }>(
        "GET",
        "/agents/webhook-subscriptions/chatops/runs",
      );
      return runs.body.items.some((r) => r.status === "delivered") ? true : undefined;
    });
    // The model did see the payload: the secret is kept out of the trace, not out of the turn.
    expect(JSON.stringify(fake.requests.map((r) => r.body))).toContain(rotated);
    await rt.close();
    rt = undefined;

    const bodies = langfuse.received.map((r) => r.body.toString("utf8")).join("\n");
    expect(bodies).toContain("deploy api to staging");
    expect(bodies).toContain("[redacted]");
    expect(bodies).not.toContain(rotated);
    expect(bodies).not.toContain(first);
  });
});
