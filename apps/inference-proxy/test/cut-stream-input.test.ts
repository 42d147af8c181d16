import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform } from "./harness.ts";
import type { FakeUpstream } from "./upstream.ts";
import { startWithUpstream } from "./with-upstream.ts";

const pg = await requirePostgres();

interface Costs {
  total: { requests: number; inputTokens: number; outputTokens: number; costMicroUsd: number };
}

/**
 * OpenAI-style streams report their usage in the last chunk only: a stream cut before it (the
 * client gone) read its whole input all the same, and that input is metered.
 */
describe.skipIf(!pg.available)(`input of a stream cut before its usage${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ up, h, close } = await startWithUpstream());
  });
  afterAll(async () => {
    await close?.();
  });

  const costs = async () =>
    (await h.call<Costs>("GET", `/v1/orgs/${h.orgId}/usage-costs`, { token: h.adminToken })).body.total;
  /** About 100,000 tokens of prompt, streamed back. */
  const bigPrompt = JSON.stringify({
    model: "gpt-4o",
    max_tokens: 50,
    stream: true,
    messages: [{ role: "user", content: "lorem ipsum ".repeat(33_000) }],
  });
  const chat = (body: string, signal?: AbortSignal) =>
    fetch(`${h.url}/v1/llm/cloud-b/family-2/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
      body,
      ...(signal ? { signal } : {}),
    });
  const oneMoreCall = (before: Costs["total"]) =>
    eventually(async () => {
      await h.drainUsage();
      return (await costs()).requests === before.requests + 1;
    }, "the cut call's usage");

  it("a client abort after the first delta counts the input the body holds", async () => {
    await h.drainUsage();
    const before = await costs();
    up.hold = true;
    try {
      const controller = new AbortController();
      const res = await chat(bigPrompt, controller.signal);
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("delta")) seen += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      await Promise.race([
        up.aborted,
        new Promise((_, reject) => setTimeout(() => reject(new Error("upstream not aborted")), 5000)),
      ]);
    } finally {
      up.hold = false;
      up.release();
    }
    await oneMoreCall(before);
    const after = await costs();
    // Counted as the estimate counts it: a token per four bytes of the body.
    expect(after.inputTokens - before.inputTokens).toBe(Math.ceil(Buffer.byteLength(bigPrompt) / 4));
    expect(after.outputTokens - before.outputTokens).toBeGreaterThan(0);
  });

  it("a client abort after the answer began, before any of its body, still counts the input", async () => {
    await h.drainUsage();
    const before = await costs();
    up.holdBeforeBody = true;
    try {
      const controller = new AbortController();
      const res = await chat(bigPrompt, controller.signal);
      expect(res.status).toBe(200);
      expect(up.heldNow).toBe(true);
      controller.abort();
      await oneMoreCall(before);
    } finally {
      up.holdBeforeBody = false;
      up.release();
    }
    const after = await costs();
    expect(after.inputTokens - before.inputTokens).toBe(Math.ceil(Buffer.byteLength(bigPrompt) / 4));
    expect(after.outputTokens - before.outputTokens).toBe(0);
    expect(after.costMicroUsd).toBeGreaterThan(before.costMicroUsd);
  });

  it("a JSON answer the provider breaks off before its usage counts the part that arrived", async () => {
    await h.drainUsage();
    const before = await costs();
    const body = JSON.stringify({ model: "gpt-4o", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    up.hold = true;
    let received = 0;
    try {
      const res = await chat(body);
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      received = ((await reader.read()).value as Uint8Array).byteLength;
      up.breakOff = true;
      up.release();
      // The client's answer ends in an error, not as if it were whole.
      const rest = (async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read()) received += r.value.byteLength;
      })();
      await expect(rest).rejects.toThrow();
      await oneMoreCall(before);
    } finally {
      up.hold = false;
      up.breakOff = false;
      up.release();
    }
    const after = await costs();
    expect(received).toBeGreaterThan(0);
    expect(after.outputTokens - before.outputTokens).toBe(Math.ceil(received / 4));
    expect(after.inputTokens - before.inputTokens).toBe(Math.ceil(Buffer.byteLength(body) / 4));
  });
});
