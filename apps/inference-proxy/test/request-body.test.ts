import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import { analyzeRequest, estimateMicroUsd, readTopLevel } from "../src/proxy/request.ts";
import { checkTierHeaders } from "../src/proxy/service-tier.ts";
import type { Upstream } from "../src/proxy/target.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const READ = [
  "model",
  "max_tokens",
  "max_completion_tokens",
  "max_output_tokens",
  "inferenceConfig",
  "textGenerationConfig",
  "max_gen_len",
  "maxTokens",
  "stream",
  // Read to find input the body references but does not hold (unseen-input.test.ts).
  "tools",
  "prompt",
];

/** What JSON.parse makes of the members the proxy reads. */
function expected(text: string): Record<string, unknown> {
  const all = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(READ.filter((k) => k in all).map((k) => [k, all[k]]));
}

const upstream = (api: Upstream["api"]): Upstream => ({
  url: new URL("http://127.0.0.1:9/x"),
  origin: "http://127.0.0.1:9",
  path: "/x",
  auth: { kind: "header", name: "x-api-key", value: "k" },
  api,
  streamingPath: false,
});

describe("reading the request body's top-level members", () => {
  it("reads what JSON.parse reads, whatever the conversation holds", () => {
    const bodies = [
      `{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`,
      // Nested members of the same names, quotes, backslashes and brackets inside strings.
      `{"messages":[{"role":"user","content":"say \\"model\\": \\"x\\" } ] {","model":"nested"}],"model":"outer","max_tokens":5}`,
      `{"system":"ends in a backslash \\\\","model":"after-backslash","max_tokens":7}`,
      `{"system":"\\\\\\"still inside\\\\\\"","model":"m1"}`,
      // Escaped member names, whitespace everywhere, unicode.
      ` {\n "mod\\u0065l" : "escaped-name" ,\t"max_tokens" : 1e2, "stream":false } `,
      `{"model":"日本語-model","stream":true,"inferenceConfig":{"maxTokens":300,"stopSequences":["]}"]}}`,
      `{"tools":[{"input_schema":{"type":"object","properties":{"model":{"type":"string"}}}}],"model":"tools"}`,
      `{"max_completion_tokens":0,"model":null,"stream":false,"extra":[1,-2.5e-3,true,false,null,{}]}`,
      "{}",
    ];
    for (const text of bodies) expect(readTopLevel(enc(text)), text).toEqual(expected(text));
    // Past the size parsed whole, the same members come from the scan.
    const padding = `"pad":"${"x".repeat(10_000)}"`;
    for (const text of bodies.filter((t) => t.trim() !== "{}")) {
      const big = text.replace("{", `{${padding},`);
      expect(readTopLevel(enc(big)), text).toEqual(expected(text));
    }
  });

  it("reads the members of a small body whose skipped members are not valid JSON, as the scan does", () => {
    expect(readTopLevel(enc('{"messages":[tru],"model":"x","max_tokens":3}'))).toEqual({ model: "x", max_tokens: 3 });
    expect(readTopLevel(enc('{"model":"y","note":nope}'))).toEqual({ model: "y" });
  });

  it("a body that is not a JSON object is not read (and is refused, below)", () => {
    for (const text of [
      "[1,2]",
      '"model"',
      "not json",
      '{"model":"x"',
      '{"model":"x",}',
      '{"model":"x"} trailing',
      '{"messages":[{"a":1]],"model":"x"}',
      '{"model" "x"}',
      '{"model":}',
      '{"model":"unterminated}',
    ]) {
      expect(readTopLevel(enc(text)), text).toBeUndefined();
    }
  });

  it("reads the output cap of every Bedrock model family's invoke body, so the estimate holds it", () => {
    const cases: [string, Record<string, unknown>, number][] = [
      ["anthropic.claude-haiku-4-5", { anthropic_version: "bedrock-2023-05-31", max_tokens: 11, messages: [] }, 11],
      ["amazon.titan-text-express-v1", { inputText: "hi", textGenerationConfig: { maxTokenCount: 12, topP: 1 } }, 12],
      ["amazon.nova-lite-v1:0", { messages: [], inferenceConfig: { max_new_tokens: 13, topP: 0.9 } }, 13],
      ["meta.llama3-8b-instruct-v1:0", { prompt: "hi", max_gen_len: 14, temperature: 0.5 }, 14],
      ["mistral.mistral-7b-instruct-v0:2", { prompt: "hi", max_tokens: 15 }, 15],
      ["ai21.j2-mid-v1", { prompt: "hi", maxTokens: 16 }, 16],
      // None named: the model's most (given to the estimate).
      ["meta.llama3-8b-instruct-v1:0", { prompt: "hi" }, 128_000],
    ];
    for (const [model, body, cap] of cases) {
      const target = { ...upstream("bedrock-invoke"), modelFromPath: model };
      const bytes = enc(JSON.stringify(body));
      const analyzed = analyzeRequest(target, `model/${model}/invoke`, bytes);
      // Input at a micro-USD a token (four bytes each), output at a micro-USD a token.
      expect(estimateMicroUsd(analyzed, bytes.byteLength, { input: 1, output: 1 }, 128_000), model).toBe(
        Math.ceil(bytes.byteLength / 4) + cap,
      );
    }
  });

  it("analyzes a large conversation without parsing it, and still adds include_usage to OpenAI-style streams", () => {
    const messages = Array.from({ length: 4000 }, (_, n) => ({ role: "user", content: `turn ${n} "model": "no" ]}` }));
    const big = enc(JSON.stringify({ messages, model: "claude-haiku-4-5", max_tokens: 99 }));
    expect(big.byteLength).toBeGreaterThan(150_000);
    const analyzed = analyzeRequest(upstream("anthropic"), "anthropic/v1/messages", big);
    expect(analyzed.body).toBe(big);
    expect(analyzed).toMatchObject({ model: "claude-haiku-4-5", maxTokens: 99, embeddings: false });

    const chat = enc(JSON.stringify({ model: "gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] }));
    const rewritten = analyzeRequest(upstream("openai"), "openai/v1/chat/completions", chat);
    expect(JSON.parse(new TextDecoder().decode(rewritten.body))).toMatchObject({
      model: "gpt-x",
      stream: true,
      stream_options: { include_usage: true },
    });
    const asked = enc(JSON.stringify({ model: "gpt-x", stream: true, stream_options: { include_usage: true } }));
    expect(analyzeRequest(upstream("openai"), "openai/v1/chat/completions", asked).body).toBe(asked);
    expect(analyzeRequest(upstream("bedrock-invoke"), "model/m/invoke", enc('{"inputText":"a"}')).embeddings).toBe(
      true,
    );
  });
});

describe("bodies whose estimate could be smaller than the call the provider runs", () => {
  const padded = (text: string) => text.replace("{", `{"pad":"${"x".repeat(10_000)}",`);
  const refused = (text: string) => {
    try {
      readTopLevel(enc(text));
    } catch (err) {
      return err instanceof ProblemError ? `${err.status} ${err.message}` : String(err);
    }
    return "read";
  };

  it("a member read that is named twice is a 400, whichever comes first, also spelled with escapes", () => {
    for (const text of [
      '{"model":"m","max_tokens":100000,"max_tokens":1}',
      '{"model":"m","max_tokens":1,"max_tokens":100000}',
      '{"model":"m","max\\u005ftokens":100000,"max_tokens":1}',
      '{"model":"claude-opus-4-1","model":"claude-haiku-4-5","max_tokens":1}',
      '{"inferenceConfig":{"maxTokens":100000,"maxTokens":1}}',
      '{"inferenceConfig":{"maxTokens":1},"inferenceConfig":{"maxTokens":100000}}',
      '{"stream":true,"stream_options":{"include_usage":false,"include_usage":true}}',
    ]) {
      expect(refused(text), text).toMatch(/^400 The body names "[a-zA-Z_]+" twice/);
      expect(refused(padded(text)), text).toMatch(/^400 The body names "[a-zA-Z_]+" twice/);
    }
  });

  it("a member read named twice is found among text in other scripts and bytes that are not UTF-8", () => {
    const twice = (before: Uint8Array) =>
      Buffer.concat([Buffer.from('{"note":"'), before, Buffer.from('","max_tokens":100000,"max_tokens":1}')]);
    for (const bytes of [Buffer.from("été 🙂 注意"), Buffer.from([0xc3, 0x41, 0xff, 0xe2, 0x82])]) {
      let refusal: unknown;
      try {
        readTopLevel(twice(bytes));
      } catch (err) {
        refusal = err;
      }
      expect(refusal instanceof ProblemError ? refusal.message : refusal).toMatch(/^The body names "max_tokens" twice/);
    }
  });

  it("names repeated where they are not members read, or inside the conversation, are not refused", () => {
    for (const text of [
      '{"model":"m","messages":[{"role":"user","content":"\\"max_tokens\\": 1, \\"max_tokens\\": 2"}],"max_tokens":5}',
      '{"model":"m","tools":[{"input_schema":{"properties":{"model":{},"max_tokens":{}}}}],"metadata":{"model":"a"}}',
      '{"model":"m","max_tokens":5,"inferenceConfig":{"maxTokens":5},"maxTokens":5}',
      '{"model":"m","note":"\\u00e9t\\u00e9","max_tokens":5}',
    ]) {
      expect(refused(text), text).toBe("read");
      expect(refused(padded(text)), text).toBe("read");
    }
  });

  const estimate = (body: Record<string, unknown>, api: Upstream["api"] = "openai", tail = "v1/chat/completions") => {
    const bytes = enc(JSON.stringify(body));
    const analyzed = analyzeRequest(upstream(api), tail, bytes);
    // Output at a micro-USD a token, input free; the model's most is 128,000 tokens.
    return estimateMicroUsd(analyzed, bytes.byteLength, { input: 0, output: 1 }, 128_000);
  };

  it("of several output caps named, the largest is reserved", () => {
    expect(estimate({ model: "m", max_tokens: 1, max_completion_tokens: 64_000 })).toBe(64_000);
    expect(estimate({ model: "m", max_completion_tokens: 1, max_output_tokens: 64_000 })).toBe(64_000);
    expect(
      estimate(
        { inferenceConfig: { maxTokens: 1 }, additionalModelRequestFields: { max_tokens: 64_000 } },
        "converse",
        "model/m/converse",
      ),
    ).toBe(64_000);
  });

  it("an output cap that is not a positive integer is reserved as the model's most", () => {
    for (const cap of ["100000", "1e5", 0, -1, 1.5, null, true, [1], { n: 1 }, 1e300]) {
      expect(estimate({ model: "m", max_tokens: cap, max_completion_tokens: 1 }), JSON.stringify(cap)).toBe(128_000);
    }
    expect(estimate({ model: "m", max_tokens: 7 })).toBe(7);
  });

  it("a call asking for several answers reserves each of them", () => {
    expect(estimate({ model: "m", max_completion_tokens: 1000, n: 8 })).toBe(8000);
    expect(estimate({ model: "m", max_completion_tokens: 1000, n: "8" })).toBe(8000);
    expect(estimate({ model: "m", n: 2 })).toBe(256_000);
    expect(estimate({ prompt: "hi", max_tokens: 100, num_generations: 5 }, "bedrock-invoke", "model/m/invoke")).toBe(
      500,
    );
    for (const n of [0, -3, "x", null, 1]) expect(estimate({ model: "m", max_tokens: 10, n }), String(n)).toBe(10);
  });

  it("a chat call naming an embedding model in its body is still estimated as a chat call", () => {
    expect(estimate({ model: "text-embedding-3-large", max_tokens: 500 })).toBe(500);
    expect(estimate({ model: "text-embedding-3-large", input: "hi" }, "openai", "v1/embeddings")).toBe(0);
  });

  it("an OpenAI-style stream is forwarded asking for its usage, or refused when it cannot be", () => {
    const analyze = (text: string) => {
      try {
        const body = analyzeRequest(upstream("openai"), "v1/chat/completions", enc(text)).body;
        return body ? JSON.parse(new TextDecoder().decode(body)) : undefined;
      } catch (err) {
        return err instanceof ProblemError ? `${err.status} ${err.message}` : String(err);
      }
    };
    expect(analyze('{"model":"m","stream":true}')).toEqual({
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
    });
    for (const stream of ['"true"', "1", '"yes"', "null", "{}"]) {
      expect(analyze(`{"model":"m","stream":${stream}}`), stream).toBe("400 stream must be true or false");
    }
    // Lenient parsers read NaN, Infinity and trailing commas; the usage could not be asked for.
    expect(analyze('{"model":"m","stream":true,"temperature":NaN}')).toBe(
      "400 The body of a streamed call is not valid JSON",
    );
    expect(analyze('{"model":"m","stream":false,"temperature":0.5}')).toEqual({
      model: "m",
      stream: false,
      temperature: 0.5,
    });
  });

  it("a tier or latency billed above the price table is refused, in the body or a Bedrock header", () => {
    const tier = (body: Record<string, unknown> | string, api: Upstream["api"] = "openai") => {
      try {
        analyzeRequest(upstream(api), "x", enc(typeof body === "string" ? body : JSON.stringify(body)));
        return "forwarded";
      } catch (err) {
        return err instanceof ProblemError ? err.status : String(err);
      }
    };
    for (const body of [
      { model: "m", service_tier: "priority" },
      { model: "m", service_tier: "scale" },
      { model: "m", service_tier: ["auto"] },
      { messages: [], serviceTier: { type: "priority" } },
      { messages: [], performanceConfig: { latency: "optimized" } },
      '{"messages":[],"serviceTier":{"type":"priority","type":"default"}}',
      `{"messages":[],"serviceTier":{"type":"priority"},"pad":"${"x".repeat(10_000)}"}`,
      { messages: [], anthropic_beta: ["context-1m-2025-08-07"] },
      { messages: [], anthropic_beta: ["interleaved-thinking-2025-05-14", " Context-1M-2025-08-07"] },
    ]) {
      expect(tier(body, "converse"), JSON.stringify(body)).toBe(400);
    }
    for (const body of [
      { model: "m", service_tier: "auto" },
      { model: "m", service_tier: "default" },
      { model: "m", service_tier: "flex" },
      { model: "m", service_tier: "standard_only" },
      { messages: [], serviceTier: { type: "flex" }, performanceConfig: { latency: "standard" } },
      { messages: [], anthropic_beta: ["interleaved-thinking-2025-05-14"] },
    ]) {
      expect(tier(body), JSON.stringify(body)).toBe("forwarded");
    }
    const headers = (h: Record<string, string>) => {
      try {
        checkTierHeaders(new Headers(h));
        return "forwarded";
      } catch (err) {
        return err instanceof ProblemError ? err.status : String(err);
      }
    };
    expect(headers({ "x-amzn-bedrock-service-tier": "priority" })).toBe(400);
    expect(headers({ "x-amzn-bedrock-performanceconfig-latency": "optimized" })).toBe(400);
    expect(
      headers({ "x-amzn-bedrock-service-tier": "flex", "x-amzn-bedrock-performanceconfig-latency": "standard" }),
    ).toBe("forwarded");
    // The long-context beta is billed at a premium past 200k input tokens; other betas pass.
    expect(headers({ "anthropic-beta": "prompt-caching-2024-07-31, context-1m-2025-08-07" })).toBe(400);
    expect(headers({ "anthropic-beta": "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14" })).toBe(
      "forwarded",
    );
  });

  it("a body the proxy cannot read as a JSON object, or naming a member read in other letter case, is a 400", () => {
    const outcome = (bytes: Uint8Array) => {
      try {
        analyzeRequest(upstream("anthropic"), "anthropic/v1/messages", bytes);
        return "forwarded";
      } catch (err) {
        return err instanceof ProblemError ? `${err.status} ${err.message}` : String(err);
      }
    };
    const body = '{"model":"claude-opus-4-1","max_tokens":64000,"messages":[]}';
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc(body)]);
    const utf16 = new Uint8Array(Buffer.from(body, "utf16le"));
    for (const bytes of [bom, utf16, enc(body.replace("}", ",}")), enc(`[${body}]`), enc("not json")]) {
      expect(outcome(bytes)).toMatch(/^400 The body is not a JSON object/);
    }
    for (const text of [
      '{"model":"claude-haiku-4-5","Model":"claude-opus-4-1","max_tokens":1}',
      '{"MODEL":"claude-opus-4-1","max_tokens":1}',
      '{"model":"m","Max_Tokens":64000,"max_tokens":1}',
      '{"model":"m","N":8,"max_tokens":1}',
    ]) {
      expect(outcome(enc(text)), text).toMatch(/^400 The body names "\w+"; spell it/);
      expect(outcome(enc(text.replace("{", `{"pad":"${"x".repeat(10_000)}",`))), text).toMatch(/^400 The body names/);
    }
    expect(outcome(enc(body))).toBe("forwarded");
    expect(outcome(new Uint8Array(0))).toBe("forwarded");
  });
});
