import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

const pg = await requirePostgres();

interface Costs {
  total: { requests: number; inputTokens: number; outputTokens: number };
}

/**
 * A caller can make an answer as large as it likes (log probabilities of every token, a batch of
 * embeddings): however large, its usage is read and charged, never recorded as nothing.
 */
describe.skipIf(!pg.available)(`answers too large to keep${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform({ cloudBKey: CREDS.cloudBKey, cloudBBaseUrl: up.url });
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const costs = async () =>
    (await h.call<Costs>("GET", `/v1/orgs/${h.orgId}/usage-costs`, { token: h.adminToken })).body.total;

  it("a completion with log probabilities of over 8 MiB is charged its usage", async () => {
    const before = await costs();
    const res = await fetch(`${h.url}/v1/llm/cloud-b/family-2/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o",
        max_completion_tokens: 100,
        logprobs: true,
        top_logprobs: 20,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(8 * 1024 * 1024);
    await eventually(async () => {
      await h.drainUsage();
      return (await costs()).requests === before.requests + 1;
    }, "the call's usage");
    const after = await costs();
    expect(after.outputTokens - before.outputTokens).toBe(USAGE.output);
    expect(after.inputTokens - before.inputTokens).toBe(USAGE.input);
  });
});
