import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";
import { text } from "./support/script.ts";

const MODEL_KEY = "sk-model-key-5f2b9c1e";
const HOOK_SECRET = "hook-secret-7d41a0";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake, { env: { CLOUD_B_API_KEY: MODEL_KEY } });
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

/** The texts of the main web thread, which anyone who may read the agent's threads reads. */
async function webTexts(): Promise<string[]> {
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const main = threads.body.items.find((t) => t.main)?.id;
  const { body } = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`);
  return body.items.map((m) => m.text);
}

const bearer = { authorization: `Bearer ${HOOK_SECRET}` };

describe("what a webhook posts to the web chat", () => {
  it("stores a deliver-only payload carrying the runtime's secrets with them redacted", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "ci-env",
      deliverOnly: true,
      deliverTo: "Chat",
      verification: { kind: "bearer", secret: HOOK_SECRET },
    });
    const payload = { job: "deploy", env: { HOOK_TOKEN: HOOK_SECRET, CLOUD_B_API_KEY: MODEL_KEY } };
    const res = await rt.request("POST", "/agents/webhooks/ci-env", payload, bearer);
    expect(res.status).toBe(200);
    const posted = (await webTexts()).find((t) => t.includes("**Webhook: ci-env**")) ?? "";
    expect(posted).toContain('"job": "deploy"');
    expect(posted).not.toContain(HOOK_SECRET);
    expect(posted).not.toContain(MODEL_KEY);
    expect(posted).toContain('"HOOK_TOKEN": "[redacted]"');
  });

  it("stores an agent-mode run's answer repeating a secret from its payload with it redacted", async () => {
    // A model repeats what it was given: the payload's token comes back in its answer.
    fake.respond = (body) => text(`Summary: ${lastUserText(body).slice(-200)}`);
    await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "ci-run",
      deliverTo: "Chat",
      prompt: "Summarize: token {token}",
      verification: { kind: "bearer", secret: HOOK_SECRET },
    });
    const res = await rt.request("POST", "/agents/webhooks/ci-run", { token: HOOK_SECRET }, bearer);
    expect(res.status).toBe(202);
    const posted = await waitFor(async () => (await webTexts()).find((t) => t.includes("**Webhook: ci-run**")));
    expect(posted).toContain("Summary:");
    expect(posted).not.toContain(HOOK_SECRET);
    expect(posted).toContain("[redacted]");
  });
});
