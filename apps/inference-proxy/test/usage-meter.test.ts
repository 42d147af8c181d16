import { describe, expect, it } from "vitest";
import { UsageMeter } from "../src/proxy/usage.ts";
import { frame } from "./upstream.ts";

const enc = (s: string) => new TextEncoder().encode(s);
/** Feeds the bytes in small pieces, as a network would, split at arbitrary points. */
function feed(meter: UsageMeter, bytes: Uint8Array, piece = 7): void {
  for (let i = 0; i < bytes.byteLength; i += piece) meter.push(bytes.subarray(i, i + piece));
}
const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const sseText = (events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
const sse = (events: unknown[]) => enc(sseText(events));

describe("usage read from every response kind", () => {
  it("Anthropic JSON, cache tokens included", () => {
    const m = new UsageMeter("anthropic", "application/json");
    feed(
      m,
      enc(
        JSON.stringify({
          usage: { input_tokens: 11, output_tokens: 22, cache_read_input_tokens: 33, cache_creation_input_tokens: 44 },
        }),
      ),
    );
    expect(m.result()).toEqual({ inputTokens: 11, outputTokens: 22, cacheReadTokens: 33, cacheWriteTokens: 44 });
  });

  it("a long JSON answer: the usage and model read past text that looks like them", () => {
    // Past 8 KiB the answer is scanned, not built whole: the text (with braces, quotes, escapes and
    // a "usage" of its own inside strings and nested objects) must not be taken for the usage.
    const text = `${'{"usage": {"input_tokens": 999}} \\" [ '.repeat(600)}é`;
    const answer = {
      id: "msg_1",
      content: [
        { type: "text", text },
        { type: "tool_use", input: { usage: { input_tokens: 1 }, model: "not-this" } },
      ],
      model: "claude-long",
      usage: { input_tokens: 12, output_tokens: 3400, cache_read_input_tokens: 5 },
    };
    const bytes = enc(JSON.stringify(answer));
    expect(bytes.byteLength).toBeGreaterThan(8 * 1024);
    for (const piece of [bytes.byteLength, 1000, 7]) {
      const m = new UsageMeter("anthropic", "application/json");
      feed(m, bytes, piece);
      expect(m.result()).toEqual({ inputTokens: 12, outputTokens: 3400, cacheReadTokens: 5, cacheWriteTokens: 0 });
      expect(m.model).toBe("claude-long");
    }
    const cut = new UsageMeter("anthropic", "application/json");
    feed(cut, bytes.subarray(0, bytes.byteLength - 20));
    expect(cut.result()).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it("Anthropic SSE: message_start then message_delta; partial output counted from deltas", () => {
    const start = {
      type: "message_start",
      message: { model: "claude-x", usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 7 } },
    };
    const delta = { type: "content_block_delta", delta: { type: "text_delta", text: "abcdefghij" } };
    const partial = new UsageMeter("anthropic", "text/event-stream");
    feed(partial, sse([start, delta]));
    expect(partial.result()).toEqual({ inputTokens: 5, outputTokens: 3, cacheReadTokens: 7, cacheWriteTokens: 0 });
    const full = new UsageMeter("anthropic", "text/event-stream");
    feed(full, sse([start, delta, { type: "message_delta", usage: { output_tokens: 9 } }]));
    expect(full.result().outputTokens).toBe(9);
    expect(full.model).toBe("claude-x");
  });

  it("Bedrock invoke-with-response-stream chunks with amazon-bedrock-invocationMetrics", () => {
    const chunk = (e: unknown) => frame("chunk", { bytes: Buffer.from(JSON.stringify(e)).toString("base64") });
    const m = new UsageMeter("bedrock-invoke", "application/vnd.amazon.eventstream");
    feed(
      m,
      concat([
        chunk({ type: "message_start", message: { usage: { input_tokens: 4, output_tokens: 1 } } }),
        chunk({ type: "content_block_delta", delta: { text: "hi" } }),
        chunk({
          type: "message_stop",
          "amazon-bedrock-invocationMetrics": {
            inputTokenCount: 40,
            outputTokenCount: 50,
            cacheReadInputTokenCount: 60,
            cacheWriteInputTokenCount: 70,
          },
        }),
      ]),
      5,
    );
    expect(m.result()).toEqual({ inputTokens: 40, outputTokens: 50, cacheReadTokens: 60, cacheWriteTokens: 70 });
  });

  it("Converse JSON and converse-stream metadata", () => {
    const usage = { inputTokens: 3, outputTokens: 4, cacheReadInputTokens: 5, cacheWriteInputTokens: 6 };
    const json = new UsageMeter("converse", "application/json");
    feed(json, enc(JSON.stringify({ output: {}, usage })));
    expect(json.result()).toEqual({ inputTokens: 3, outputTokens: 4, cacheReadTokens: 5, cacheWriteTokens: 6 });
    const stream = new UsageMeter("converse", "application/vnd.amazon.eventstream");
    feed(stream, concat([frame("contentBlockDelta", { delta: { text: "x" } }), frame("metadata", { usage })]), 3);
    expect(stream.result()).toEqual({ inputTokens: 3, outputTokens: 4, cacheReadTokens: 5, cacheWriteTokens: 6 });
  });

  it("OpenAI-style JSON, streams with a usage chunk, and embeddings (cached prompt tokens split out)", () => {
    const usage = { prompt_tokens: 100, completion_tokens: 8, prompt_tokens_details: { cached_tokens: 60 } };
    const json = new UsageMeter("openai", "application/json");
    feed(json, enc(JSON.stringify({ choices: [], usage })));
    expect(json.result()).toEqual({ inputTokens: 40, outputTokens: 8, cacheReadTokens: 60, cacheWriteTokens: 0 });
    const stream = new UsageMeter("openai", "text/event-stream; charset=utf-8");
    feed(
      stream,
      enc(`${sseText([{ choices: [{ delta: { content: "hey" } }] }, { choices: [], usage }])}data: [DONE]\n\n`),
    );
    expect(stream.result()).toEqual({ inputTokens: 40, outputTokens: 8, cacheReadTokens: 60, cacheWriteTokens: 0 });
    const emb = new UsageMeter("openai", "application/json");
    feed(emb, enc(JSON.stringify({ data: [], usage: { prompt_tokens: 9, total_tokens: 9 } })));
    expect(emb.result()).toEqual({ inputTokens: 9, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it("Bedrock embeddings through invoke (inputTextTokenCount) and header counts", () => {
    const titan = new UsageMeter("bedrock-invoke", "application/json");
    feed(titan, enc(JSON.stringify({ embedding: [0.1], inputTextTokenCount: 17 })));
    expect(titan.result()).toMatchObject({ inputTokens: 17, outputTokens: 0 });
    const headers = new UsageMeter("bedrock-invoke", "application/json", {
      "x-amzn-bedrock-input-token-count": "12",
      "x-amzn-bedrock-output-token-count": "13",
    });
    feed(headers, enc("not json"));
    expect(headers.result()).toMatchObject({ inputTokens: 12, outputTokens: 13 });
  });

  it("a JSON answer too large to keep (log probabilities, many embeddings) still has its usage read", () => {
    // Each token's alternatives hold text that looks like a usage member, and a tool call's object
    // has one of its own: only the answer's top-level usage counts.
    const entry = {
      token: '"usage": {"prompt_tokens": 1}',
      logprob: -0.5,
      top_logprobs: Array.from({ length: 5 }, () => ({ token: '} ] { \\ "', logprob: -1, bytes: [125, 93] })),
      extra: { usage: { prompt_tokens: 2, completion_tokens: 2 } },
    };
    const content = Array.from({ length: 25_000 }, () => entry);
    const chat = enc(
      JSON.stringify({
        id: "c1",
        model: "gpt-x",
        choices: [{ index: 0, message: { role: "assistant", content: "hi" }, logprobs: { content } }],
        usage: { prompt_tokens: 1200, completion_tokens: 25_000, prompt_tokens_details: { cached_tokens: 200 } },
        system_fingerprint: "fp",
      }),
    );
    expect(chat.byteLength).toBeGreaterThan(9 * 1024 * 1024);
    for (const piece of [chat.byteLength, 65_536, 4099]) {
      const m = new UsageMeter("openai", "application/json");
      feed(m, chat, piece);
      expect(m.result(), String(piece)).toEqual({
        inputTokens: 1000,
        outputTokens: 25_000,
        cacheReadTokens: 200,
        cacheWriteTokens: 0,
      });
      expect(m.model).toBe("gpt-x");
    }
    const vectors = Array.from({ length: 400 }, (_, index) => ({
      object: "embedding",
      index,
      embedding: Array.from({ length: 3072 }, (_, i) => -0.012345678 * (i % 7)),
    }));
    const embeddings = enc(
      JSON.stringify({
        object: "list",
        data: vectors,
        model: "emb",
        usage: { prompt_tokens: 8000, total_tokens: 8000 },
      }),
    );
    expect(embeddings.byteLength).toBeGreaterThan(9 * 1024 * 1024);
    const m = new UsageMeter("openai", "application/json");
    feed(m, embeddings, 65_536);
    expect(m.result()).toEqual({ inputTokens: 8000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });
});
