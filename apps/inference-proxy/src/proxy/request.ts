import type { ApiKind, Upstream } from "./target.ts";

export interface AnalyzedRequest {
  /** The bytes to forward (the caller's, or with `stream_options.include_usage` added). */
  body: Uint8Array | undefined;
  model: string | undefined;
  maxTokens: number | undefined;
  /** Embeddings produce no output tokens. */
  embeddings: boolean;
}

type Json = Record<string, unknown>;

/**
 * Reads what the estimate and the policy decision need from the request body: the model, the
 * output cap, whether it is an embedding call. For OpenAI-style streams that did not ask for
 * usage, `stream_options.include_usage` is added so the final chunk carries the counts.
 */
export function analyzeRequest(upstream: Upstream, tail: string, raw: Uint8Array | undefined): AnalyzedRequest {
  let json: Json | undefined;
  if (raw && raw.byteLength > 0) {
    try {
      const parsed = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8")) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) json = parsed as Json;
    } catch {
      // Not JSON: forwarded as is, estimated from its size.
    }
  }
  const api: ApiKind = upstream.api;
  const model = upstream.modelFromPath ?? (typeof json?.model === "string" ? json.model : undefined);
  const embeddings =
    /embed/i.test(tail) || (model !== undefined && /embed/i.test(model)) || (json !== undefined && "inputText" in json);
  let maxTokens: number | undefined;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined);
  if (json) {
    maxTokens =
      num(json.max_tokens) ??
      num(json.max_completion_tokens) ??
      num((json.inferenceConfig as Json | undefined)?.maxTokens) ??
      num(json.max_output_tokens);
  }
  let body = raw;
  if (api === "openai" && json?.stream === true) {
    const options = (json.stream_options ?? {}) as Json;
    if (options.include_usage !== true) {
      json.stream_options = { ...options, include_usage: true };
      body = new TextEncoder().encode(JSON.stringify(json));
    }
  }
  return { body, model, maxTokens, embeddings };
}

/** Prices per million tokens, i.e. micro-USD per token. */
export interface EstimatePrice {
  input: number;
  output: number;
}

/**
 * The amount reserved before the call: the input estimated from the body size (a token is at
 * least about four bytes of JSON) plus the output cap at the model's output price.
 */
export function estimateMicroUsd(
  request: AnalyzedRequest,
  bodyBytes: number,
  price: EstimatePrice,
  defaultMaxTokens: number,
): number {
  const input = Math.ceil(bodyBytes / 4);
  const output = request.embeddings ? 0 : (request.maxTokens ?? defaultMaxTokens);
  return Math.ceil(input * price.input + output * price.output);
}
