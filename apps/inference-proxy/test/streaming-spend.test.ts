import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eventually, type InferencePlatform, manualClock, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream, USAGE } from "./upstream.ts";

const pg = await requirePostgres();

interface Status {
  items: { limitId: string; spentUsd: number; reservedUsd: number; limitUsd: number }[];
}
interface Costs {
  total: { requests: number; inputTokens: number; outputTokens: number; cacheReadTokens: number; costMicroUsd: number };
}

// claude-haiku-4-5: $1 input, $5 output, $0.10 cache read, $1.25 cache write per million tokens.
const HAIKU_COST = Math.round(USAGE.input * 1 + USAGE.output * 5 + USAGE.cacheRead * 0.1 + USAGE.cacheWrite * 1.25);
const messages = [{ role: "user", content: "hi" }];

describe.skipIf(!pg.available)(`streaming, spend reservations and limits${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  const clock = manualClock();

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform(
      {
        cloudA: { kind: "bearer", token: CREDS.bearer },
        cloudBKey: CREDS.cloudBKey,
        cloudAEndpointUrl: up.url,
        cloudBBaseUrl: `${up.url}/anthropic/v1`,
        cloudBOpenAiBaseUrl: `${up.url}/openai/v1`,
      },
      { spend: { clock } },
    );
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const messagesUrl = () => `${h.url}/v1/llm/cloud-b/family-1/anthropic/v1/messages`;
  const post = (body: unknown, init: RequestInit = {}) =>
    fetch(messagesUrl(), {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.projectToken}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
      ...init,
    });
  const costs = async () =>
    (await h.call<Costs>("GET", `/v1/orgs/${h.orgId}/usage-costs`, { token: h.adminToken })).body.total;
  const status = async () =>
    (await h.call<Status>("GET", `/v1/orgs/${h.orgId}/spending-limits/status`, { token: h.adminToken })).body.items;

  it("the first event reaches the client before the upstream finishes", async () => {
    up.hold = true;
    try {
      const res = await post({ model: "claude-haiku-4-5", max_tokens: 50, stream: true, messages });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain("message_start");
      expect(up.heldNow).toBe(true);
      up.release();
      let rest = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest += new TextDecoder().decode(value);
      }
      expect(rest).toContain("message_stop");
    } finally {
      up.hold = false;
      up.release();
    }
  });

  it("a JSON answer that came whole goes out whole: its length, its exact bytes and the caller's request id", async () => {
    const res = await fetch(messagesUrl(), {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.projectToken}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-request-id": "req-whole-answer",
      },
      body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 50, messages }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("req-whole-answer");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(res.headers.get("content-length")).toBe(String(bytes.byteLength));
    const message = JSON.parse(new TextDecoder().decode(bytes)) as { type: string; usage: { input_tokens: number } };
    expect(message.type).toBe("message");
    expect(message.usage.input_tokens).toBe(USAGE.input);
  });

  it("a client abort mid-stream aborts the upstream and records the usage seen so far", async () => {
    await h.drainUsage();
    const before = await costs();
    up.hold = true;
    try {
      const controller = new AbortController();
      const res = await post(
        { model: "claude-haiku-4-5", max_tokens: 50, stream: true, messages },
        { signal: controller.signal },
      );
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("content_block_delta")) seen += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      await Promise.race([
        up.aborted,
        new Promise((_, reject) => setTimeout(() => reject(new Error("upstream not aborted")), 5000)),
      ]);
    } finally {
      up.hold = false;
      up.release();
    }
    await eventually(async () => {
      await h.drainUsage();
      return (await costs()).requests === before.requests + 1;
    }, "the partial usage");
    const after = await costs();
    // Input and cache tokens from message_start; output counted from the one delta received.
    expect(after.inputTokens - before.inputTokens).toBe(USAGE.input);
    expect(after.cacheReadTokens - before.cacheReadTokens).toBe(USAGE.cacheRead);
    expect(after.outputTokens - before.outputTokens).toBe(1);
  });

  it("an answer the provider breaks off is cut for the client, metered, and nothing goes to stderr", async () => {
    await h.drainUsage();
    const before = await costs();
    const printed = [vi.spyOn(console, "error"), vi.spyOn(console, "info")];
    up.hold = true;
    try {
      const res = await post({ model: "claude-haiku-4-5", max_tokens: 50, stream: true, messages });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("content_block_delta")) seen += new TextDecoder().decode((await reader.read()).value);
      up.breakOff = true;
      up.release();
      // The client's answer ends in an error, not as if it were whole.
      const rest = (async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read()) seen += new TextDecoder().decode(r.value);
      })();
      await expect(rest).rejects.toThrow();
      expect(seen).not.toContain("message_stop");
      await eventually(async () => {
        await h.drainUsage();
        return (await costs()).requests === before.requests + 1;
      }, "the partial usage");
      // The node server was never handed the error (it prints errors with their stack, and writes
      // their message into the answer).
      for (const spy of printed) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of printed) spy.mockRestore();
      up.hold = false;
      up.breakOff = false;
      up.release();
    }
    expect((await costs()).outputTokens - before.outputTokens).toBe(1);
  });

  it("an upstream error passes through with its status and body and releases the reservation", async () => {
    await h.drainUsage();
    const before = await costs();
    const res = await fetch(`${h.url}/v1/llm/cloud-a/us-east-1/model/no-such-model/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "unknown model" });
    await h.drainUsage();
    expect((await costs()).requests).toBe(before.requests);
  });

  it("over a spending limit: 429 spending-limit-reached with the limit, period and Retry-After; upstream not called", async () => {
    const created = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: 0, period: "daily" },
    });
    expect(created.status).toBe(201);
    // The proxy trusted audit's earlier "no limit here" for at most 1 s: once that passed, it asks again.
    clock.advance(1000);
    const calls = up.seen.length;
    try {
      const res = await post({ model: "claude-haiku-4-5", max_tokens: 50, messages });
      expect(res.status).toBe(429);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(86_400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(String(body.type)).toMatch(/spending-limit-reached$/);
      expect(body).toMatchObject({ status: 429, limitId: created.body.id, period: "daily", limitUsd: 0 });
      expect(body.detail).toContain(`The daily spending limit ${created.body.id} of this organization is reached`);
      expect(Date.parse(String(body.resetsAt))).toBeGreaterThan(Date.now());
      expect(up.seen.length).toBe(calls);
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${created.body.id}`, { token: h.adminToken });
    }
  });

  it("over a project's spending limit: the 429 names that project, not the organization", async () => {
    const created = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: 0, period: "daily", projectId: h.projectId },
    });
    expect(created.status).toBe(201);
    clock.advance(1000);
    try {
      const res = await post({ model: "claude-haiku-4-5", max_tokens: 50, messages });
      expect(res.status).toBe(429);
      const body = (await res.json()) as { detail: string };
      expect(body.detail).toContain(`The daily spending limit ${created.body.id} of project ${h.projectId} is reached`);
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${created.body.id}`, { token: h.adminToken });
    }
  });

  it("with some of the limit left: 429 saying the call's estimate exceeds what remains, both figures", async () => {
    await h.drainUsage();
    const spent = (await costs()).costMicroUsd;
    const created = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: (spent + 1000) / 1e6, period: "monthly" },
    });
    expect(created.status).toBe(201);
    clock.advance(1000);
    try {
      // 4,096 output tokens of Haiku 4.5 at $5/M is about $0.02, above the $0.001 left.
      const res = await post({ model: "claude-haiku-4-5", max_tokens: 4096, messages });
      expect(res.status).toBe(429);
      const body = (await res.json()) as { detail: string; remainingUsd: number; estimatedUsd: number };
      expect(body.remainingUsd).toBeGreaterThan(0);
      expect(body.estimatedUsd).toBeGreaterThan(body.remainingUsd);
      expect(body.detail).not.toContain("is reached");
      expect(body.detail).toContain("exceeds");
      expect(body.detail).toContain(`$${Number(body.remainingUsd.toPrecision(4))}`);
      expect(body.detail).toContain(`$${Number(body.estimatedUsd.toPrecision(4))}`);
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${created.body.id}`, { token: h.adminToken });
    }
  });

  it("a call that names no output cap is reserved for the model's most, not a fixed 4,096 tokens", async () => {
    await h.drainUsage();
    const spent = (await costs()).costMicroUsd;
    // gpt-4o: $10 per million output tokens and at most 16,384 of them. $0.10 left covers 4,096
    // output tokens ($0.041) but not 16,384 ($0.164).
    const created = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: (spent + 100_000) / 1e6, period: "monthly" },
    });
    expect(created.status).toBe(201);
    clock.advance(1000);
    const chat = (body: Record<string, unknown>) =>
      fetch(`${h.url}/v1/llm/cloud-b/family-2/openai/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.projectToken}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o", messages, ...body }),
      });
    try {
      const unnamed = await chat({});
      expect(unnamed.status).toBe(429);
      const problem = (await unnamed.json()) as { estimatedUsd: number; remainingUsd: number };
      expect(problem.estimatedUsd).toBeGreaterThanOrEqual(0.16384);
      expect(problem.remainingUsd).toBeGreaterThan(0.04);
      // Naming a cap that fits lets the same call through.
      const named = await chat({ max_completion_tokens: 4096 });
      expect(named.status).toBe(200);
      await named.arrayBuffer();
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${created.body.id}`, { token: h.adminToken });
    }
  });

  it("50 concurrent streams against a nearly spent limit overshoot it by at most one estimate", async () => {
    await h.drainUsage();
    const spentBefore = (await costs()).costMicroUsd;
    // Room for about three reservations at once (max_tokens 1000 at $5/M output ≈ 5,000 µ$ each).
    const limitMicro = spentBefore + 16_000;
    const created = await h.call<{ id: string }>("POST", `/v1/orgs/${h.orgId}/spending-limits`, {
      token: h.adminToken,
      body: { amountUsd: limitMicro / 1e6, period: "monthly" },
    });
    expect(created.status).toBe(201);
    clock.advance(1000);
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const res = await post({ model: "claude-haiku-4-5", max_tokens: 1000, stream: true, messages });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      const ok = results.filter((s) => s === 200).length;
      expect(ok).toBeGreaterThan(0);
      expect(ok + results.filter((s) => s === 429).length).toBe(50);
      await eventually(async () => {
        await h.drainUsage();
        return (await status()).every((s) => s.reservedUsd === 0);
      }, "every reservation settled");
      const estimate = Math.ceil(200 / 4) * 1 + 1000 * 5 + 100;
      const limit = (await status()).find((s) => s.limitId === created.body.id);
      expect(limit).toBeDefined();
      expect(Math.round((limit?.spentUsd ?? 0) * 1e6)).toBeLessThanOrEqual(limitMicro + estimate);
      expect((await costs()).costMicroUsd - spentBefore).toBe(ok * HAIKU_COST);
    } finally {
      await h.call("DELETE", `/v1/orgs/${h.orgId}/spending-limits/${created.body.id}`, { token: h.adminToken });
    }
  });
});
