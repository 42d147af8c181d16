import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import { analyzeRequest, estimateMicroUsd } from "../src/proxy/request.ts";
import type { Upstream } from "../src/proxy/target.ts";

const upstream: Upstream = {
  url: new URL("http://127.0.0.1:9/x"),
  origin: "http://127.0.0.1:9",
  path: "/x",
  auth: { kind: "header", name: "x-api-key", value: "k" },
  api: "anthropic",
  streamingPath: false,
};

/** 400 when refused, else "forwarded". */
function send(body: unknown): number | string {
  try {
    analyzeRequest(upstream, "anthropic/v1/messages", new TextEncoder().encode(JSON.stringify(body)));
    return "forwarded";
  } catch (err) {
    return err instanceof ProblemError ? err.status : String(err);
  }
}

const text = (cache_control?: unknown) => ({
  type: "text",
  text: "a long document",
  ...(cache_control ? { cache_control } : {}),
});
const call = (extra: Record<string, unknown>) => ({ model: "claude-haiku-4-5", max_tokens: 16, ...extra });

describe("cache breakpoints billed above the price table", () => {
  it("a one-hour cache lifetime is a 400 wherever its breakpoint sits: its writes cost twice the input rate", () => {
    const hour = { type: "ephemeral", ttl: "1h" };
    for (const body of [
      call({ system: [text(hour)], messages: [{ role: "user", content: "hi" }] }),
      call({ messages: [{ role: "user", content: [text(hour)] }] }),
      call({ tools: [{ name: "f", input_schema: { type: "object" }, cache_control: hour }], messages: [] }),
      call({ messages: [{ role: "user", content: [text({ ttl: "60m", type: "ephemeral" })] }] }),
    ]) {
      expect(send(body), JSON.stringify(body)).toBe(400);
    }
    // Spelled with escapes a provider decodes.
    const escaped = JSON.stringify(call({ messages: [{ role: "user", content: [text(hour)] }] })).replace(
      '"cache_control"',
      '"cache\\u005fcontrol"',
    );
    expect(send(JSON.parse(escaped))).toBe(400);
    try {
      analyzeRequest(upstream, "anthropic/v1/messages", new TextEncoder().encode(escaped));
      expect.unreachable();
    } catch (err) {
      expect((err as ProblemError).status).toBe(400);
      expect((err as ProblemError).message + JSON.stringify(err)).toContain("cache_control.ttl");
    }
  });

  it("the five-minute lifetime, named or not, and text that mentions a ttl pass", () => {
    for (const body of [
      call({ system: [text({ type: "ephemeral" })], messages: [{ role: "user", content: "hi" }] }),
      call({ messages: [{ role: "user", content: [text({ type: "ephemeral", ttl: "5m" })] }] }),
      call({ messages: [{ role: "user", content: 'what does "cache_control": {"ttl": "1h"} do?' }] }),
      call({
        tools: [{ name: "set", input_schema: { type: "object", properties: { ttl: { type: "string" } } } }],
        messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "set", input: { ttl: "1h" } }] }],
      }),
    ]) {
      expect(send(body), JSON.stringify(body)).toBe("forwarded");
    }
  });

  it("input behind a cache breakpoint is estimated at the cache-write rate, which is dearer than input", () => {
    // claude-haiku-4-5: $1 input, $1.25 cache writes, $5 output per million tokens.
    const price = { input: 1, output: 5, cacheWrite: 1.25 };
    const estimate = (body: unknown) => {
      const bytes = new TextEncoder().encode(JSON.stringify(body));
      const analyzed = analyzeRequest(upstream, "anthropic/v1/messages", bytes);
      return {
        estimate: estimateMicroUsd(analyzed, bytes.byteLength, price, 64_000),
        tokens: Math.ceil(bytes.byteLength / 4),
      };
    };
    const doc = "d".repeat(400_000);
    const cached = estimate(
      call({ system: [text({ type: "ephemeral" })], messages: [{ role: "user", content: doc }] }),
    );
    expect(cached.estimate).toBe(Math.ceil(cached.tokens * 1.25 + 16 * 5));
    const plain = estimate(call({ system: [text()], messages: [{ role: "user", content: doc }] }));
    expect(plain.estimate).toBe(Math.ceil(plain.tokens * 1 + 16 * 5));
  });
});
