import { describe, expect, it } from "vitest";
import { contextWindow } from "../src/proxy/context-windows.ts";
import { analyzeRequest, estimateMicroUsd, unseenInputMicroUsd } from "../src/proxy/request.ts";
import type { ApiKind, Upstream } from "../src/proxy/target.ts";
import { SERVER_TOOL_SAMPLINGS } from "../src/proxy/unseen-input.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const upstream = (api: ApiKind, modelFromPath?: string): Upstream => ({
  url: new URL("http://127.0.0.1:9/x"),
  origin: "http://127.0.0.1:9",
  path: "/x",
  auth: { kind: "header", name: "x-api-key", value: "k" },
  api,
  streamingPath: false,
  ...(modelFromPath ? { modelFromPath } : {}),
});
const TAILS: Record<ApiKind, string> = {
  anthropic: "anthropic/v1/messages",
  openai: "openai/v1/chat/completions",
  converse: "model/amazon.nova-pro-v1:0/converse",
  "bedrock-invoke": "model/anthropic.claude-haiku-4-5/invoke",
};
// claude-haiku-4-5 at $1 input and $5 output per million tokens, i.e. micro-USD per token.
const PRICE = { input: 1, output: 5 };

/** What the call reserves today (`estimate`) and on top of it where a limit applies (`unseen`). */
function reserved(api: ApiKind, body: unknown, modelFromPath?: string) {
  const bytes = enc(typeof body === "string" ? body : JSON.stringify(body));
  const analyzed = analyzeRequest(upstream(api, modelFromPath), TAILS[api], bytes);
  return {
    estimate: estimateMicroUsd(analyzed, bytes.byteLength, PRICE, 64_000),
    unseen: unseenInputMicroUsd(analyzed, bytes.byteLength, PRICE),
    window: contextWindow(analyzed.model),
    bodyTokens: Math.ceil(bytes.byteLength / 4),
  };
}

const user = (content: unknown) => [{ role: "user", content }];
const haiku = { model: "claude-haiku-4-5", max_tokens: 16 };

describe("input the body references but does not hold", () => {
  // Each would cost up to the model's context window of input while today's estimate holds the
  // body's few hundred bytes: under a spending limit the call ran past it by that much.
  const oneSampling: [string, ApiKind, unknown, string][] = [
    [
      "an image by URL (Anthropic)",
      "anthropic",
      {
        ...haiku,
        messages: user([{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }]),
      },
      'source.type "url"',
    ],
    [
      "a document by URL, spaced out (Anthropic)",
      "anthropic",
      `{"model":"claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":[{"type":"document","source":{"type" :  "url","url":"https://example.com/300-pages.pdf"}}]}]}`,
      'source.type "url"',
    ],
    [
      "an uploaded file (Anthropic Files API)",
      "anthropic",
      { ...haiku, messages: user([{ type: "document", source: { type: "file", file_id: "file_011C" } }]) },
      "file_id",
    ],
    [
      "an uploaded file (OpenAI chat)",
      "openai",
      { model: "gpt-4o", max_tokens: 16, messages: user([{ type: "file", file: { file_id: "file-abc" } }]) },
      "file_id",
    ],
    [
      "an image by URL (OpenAI chat)",
      "openai",
      {
        model: "gpt-4o",
        max_tokens: 16,
        messages: user([{ type: "image_url", image_url: { detail: "high", url: "https://example.com/a.png" } }]),
      },
      "image_url",
    ],
    [
      "an image and a file by URL (OpenAI Responses-style parts)",
      "openai",
      {
        model: "gpt-4o",
        max_tokens: 16,
        messages: user([
          { type: "input_image", image_url: "https://example.com/a.png" },
          { type: "input_file", file_url: "https://example.com/b.pdf" },
        ]),
      },
      "image_url",
    ],
    [
      "a document in S3 (Bedrock Converse)",
      "converse",
      {
        messages: user([{ document: { format: "pdf", name: "d", source: { s3Location: { uri: "s3://b/k.pdf" } } } }]),
        inferenceConfig: { maxTokens: 16 },
      },
      "s3Location",
    ],
    // Compressed documents sent inline: a few kilobytes of PDF or Office file unfold into up to a
    // context window of page images and text, far more than a quarter of their base64 in tokens.
    [
      "a PDF inline in base64 (Anthropic)",
      "anthropic",
      {
        ...haiku,
        messages: user([
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0x" } },
        ]),
      },
      'source.media_type "application/pdf"',
    ],
    [
      "a PDF inline with its media type's slash escaped (Anthropic)",
      "anthropic",
      `{"model":"claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type" : "application\\/pdf","data":"JVBERi0x"}}]}]}`,
      'source.media_type "application/pdf"',
    ],
    [
      "a PDF inline as a data URL (OpenAI chat)",
      "openai",
      {
        model: "gpt-4o",
        max_tokens: 16,
        messages: user([
          { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0x" } },
        ]),
      },
      "file_data",
    ],
    [
      "a Word document inline (Bedrock Converse)",
      "converse",
      {
        messages: user([{ document: { format: "docx", name: "d", source: { bytes: "UEsDBBQ" } } }]),
        inferenceConfig: { maxTokens: 16 },
      },
      'document.format "docx"',
    ],
    [
      "an earlier response (OpenAI previous_response_id)",
      "openai",
      { model: "gpt-4o", max_tokens: 16, previous_response_id: "resp_123", messages: user("go on") },
      "previous_response_id",
    ],
    [
      "a stored conversation",
      "openai",
      { model: "gpt-4o", max_tokens: 16, conversation: "conv_123", messages: user("go on") },
      "conversation",
    ],
    [
      "a stored prompt (OpenAI prompt id)",
      "openai",
      { model: "gpt-4o", max_tokens: 16, prompt: { id: "pmpt_123", version: "2" }, messages: user("hi") },
      "prompt.id",
    ],
    [
      "a managed prompt's variables (Bedrock Converse)",
      "converse",
      { promptVariables: { topic: { text: "x" } }, inferenceConfig: { maxTokens: 16 } },
      "promptVariables",
    ],
    [
      "a code execution container of an earlier call (Anthropic)",
      "anthropic",
      { ...haiku, container: "container_011C", messages: user("read the file") },
      "container",
    ],
    [
      "a member name spelled with escapes",
      "anthropic",
      `{"model":"claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file\\u005fid":"file_011C"}}]}]}`,
      "file_id",
    ],
    [
      "a source type spelled with escapes",
      "anthropic",
      `{"model":"claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"\\u0075rl","url":"https://example.com/a.png"}}]}]}`,
      'source.type "url"',
    ],
  ];

  it.each(oneSampling)("%s: reserves the model's context window of input", (_what, api, body, member) => {
    const r = reserved(api, body, api === "converse" ? "amazon.nova-pro-v1:0" : undefined);
    expect(r.unseen?.members).toContain(member);
    expect(r.unseen?.microUsd).toBe(Math.ceil((r.window - r.bodyTokens) * PRICE.input));
    // Today's estimate held the body's size only: a small fraction of what the call may read.
    expect(r.estimate).toBeLessThan(r.window * PRICE.input);
    expect(r.estimate + (r.unseen?.microUsd ?? 0)).toBeGreaterThanOrEqual(r.window * PRICE.input);
  });

  const serverTools: [string, ApiKind, unknown, string][] = [
    [
      "web search (Anthropic)",
      "anthropic",
      { ...haiku, tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }], messages: user("news?") },
      'tools[0].type "web_search_20250305"',
    ],
    [
      "code execution beside a custom tool (Anthropic)",
      "anthropic",
      {
        ...haiku,
        tools: [
          { name: "lookup", input_schema: { type: "object" } },
          { type: "code_execution_20250825", name: "code_execution" },
        ],
        messages: user("plot it"),
      },
      'tools[1].type "code_execution_20250825"',
    ],
    [
      "a remote MCP server (Anthropic MCP connector)",
      "anthropic",
      { ...haiku, mcp_servers: [{ type: "url", url: "https://mcp.example.com/sse", name: "x" }], messages: user("hi") },
      "mcp_servers",
    ],
    [
      "web search of a search model (OpenAI chat)",
      "openai",
      { model: "gpt-4o", max_tokens: 16, web_search_options: {}, messages: user("news?") },
      "web_search_options",
    ],
    [
      "a hosted tool (OpenAI Responses-style tools)",
      "openai",
      {
        model: "gpt-4o",
        max_tokens: 16,
        tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }],
        messages: user("x"),
      },
      'tools[0].type "file_search"',
    ],
    [
      "a system tool (Bedrock Converse)",
      "converse",
      {
        messages: user([{ text: "news?" }]),
        toolConfig: { tools: [{ systemTool: { name: "nova_grounding" } }] },
        inferenceConfig: { maxTokens: 16 },
      },
      "toolConfig.tools[0].systemTool",
    ],
  ];

  it.each(serverTools)(
    "%s: reserves the context window for each sampling of the provider's loop",
    (_w, api, body, member) => {
      const r = reserved(api, body, api === "converse" ? "amazon.nova-pro-v1:0" : undefined);
      expect(r.unseen?.members).toContain(member);
      expect(r.unseen?.microUsd).toBe(Math.ceil((r.window * SERVER_TOOL_SAMPLINGS - r.bodyTokens) * PRICE.input));
      expect(r.estimate).toBeLessThan(r.window * PRICE.input);
    },
  );

  it("a body that holds all of its input reserves nothing more", () => {
    const bodies: [ApiKind, unknown][] = [
      ["anthropic", { ...haiku, messages: user("hi") }],
      // Images given inline: their bytes are in the body, and estimated by its size.
      ["anthropic", { ...haiku, messages: user([{ type: "image", source: { type: "base64", data: "iVBOR" } }]) }],
      [
        "openai",
        { model: "gpt-4o", messages: user([{ type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } }]) },
      ],
      [
        "openai",
        { model: "gpt-4o", messages: user([{ type: "input_image", image_url: "data:image/png;base64,iVBOR" }]) },
      ],
      // Tools the caller runs: their results come back in a later body.
      [
        "anthropic",
        {
          ...haiku,
          tools: [
            { name: "fetch", input_schema: { type: "object", properties: { url: { type: "string" } } } },
            { type: "custom", name: "c", input_schema: { type: "object" } },
            { type: "bash_20250124", name: "bash" },
            { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
            { type: "computer_20250124", name: "computer", display_width_px: 1024, display_height_px: 768 },
            { type: "memory_20250818", name: "memory" },
          ],
          // A client tool's input and a text naming the members read are not references.
          messages: [
            { role: "user", content: 'what does "file_id": "x" or {"type":"url"} mean?' },
            {
              role: "assistant",
              content: [{ type: "tool_use", id: "t", name: "fetch", input: { url: "https://a.example" } }],
            },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "page text" }] },
          ],
        },
      ],
      ["openai", { model: "gpt-4o", tools: [{ type: "function", function: { name: "f" } }], messages: user("hi") }],
      // Text naming a PDF's media type, and a schema's string format, are no documents.
      [
        "anthropic",
        {
          ...haiku,
          tools: [
            { name: "d", input_schema: { type: "object", properties: { at: { type: "string", format: "date" } } } },
          ],
          messages: user([{ type: "text", text: "application/pdf" }]),
        },
      ],
      // A Bedrock Llama body's prompt is its text.
      ["bedrock-invoke", { prompt: "hi", max_gen_len: 16 }],
      ["converse", { messages: user([{ text: "hi" }]), toolConfig: { tools: [{ toolSpec: { name: "f" } }] } }],
    ];
    for (const [api, body] of bodies) {
      expect(reserved(api, body, api === "bedrock-invoke" ? "meta.llama3-8b-instruct-v1:0" : undefined).unseen).toBe(
        undefined,
      );
    }
  });

  it("a model absent from the table is bounded by the largest window of its family, or of all", () => {
    expect(contextWindow("claude-haiku-4-5-20251001")).toBe(200_000);
    expect(contextWindow("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe(200_000);
    expect(contextWindow("claude-next-9")).toBe(1_000_000);
    expect(contextWindow("gpt-4o-2024-08-06")).toBe(128_000);
    expect(contextWindow("my-deployment")).toBeGreaterThanOrEqual(1_000_000);
    expect(contextWindow(undefined)).toBeGreaterThanOrEqual(1_000_000);
    expect(contextWindow("constructor")).toBeGreaterThanOrEqual(1_000_000);
  });
});
