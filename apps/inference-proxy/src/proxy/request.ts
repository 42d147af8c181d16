import { ProblemError } from "@agentplane/problem-details";
import { contextWindow } from "./context-windows.ts";
import { TopLevelMembers } from "./json-members.ts";
import { atMostSafe } from "./safe-amount.ts";
import { checkCacheTtl, checkTierMembers } from "./service-tier.ts";
import type { ApiKind, Upstream } from "./target.ts";
import {
  escapesPlainLetters,
  findUnseenInput,
  UNSEEN_INPUT_MEMBERS,
  type UnseenInput,
  type UnseenInputHold,
} from "./unseen-input.ts";

export interface AnalyzedRequest {
  /** The bytes to forward (the caller's, or with `stream_options.include_usage` added). */
  body: Uint8Array | undefined;
  model: string | undefined;
  /** The largest output cap the body names; undefined when none, or one a provider may read otherwise. */
  maxTokens: number | undefined;
  /** How many answers of up to `maxTokens` each the call asks for (OpenAI `n`). */
  choices: number;
  /** Embeddings produce no output tokens. */
  embeddings: boolean;
  /** Input the body references but does not hold (a file, a URL, a server tool, stored state). */
  unseenInput: UnseenInput | undefined;
  /** The body sets cache breakpoints (`cache_control`, Converse `cachePoint`): its input may be written to the cache. */
  cacheWrites: boolean;
}

type Json = Record<string, unknown>;

/**
 * Reads what the estimate and the policy decision need from the request body: the model, the
 * output cap, whether it is an embedding call. Only those top-level members are parsed; the
 * conversation is skipped over, not built (a megabyte of it is milliseconds of JSON.parse). For
 * OpenAI-style streams that did not ask for usage, `stream_options.include_usage` is added so the
 * final chunk carries the counts.
 */
export function analyzeRequest(upstream: Upstream, tail: string, raw: Uint8Array | undefined): AnalyzedRequest {
  const json = raw && raw.byteLength > 0 ? readTopLevel(raw) : undefined;
  // Every operation forwarded takes a JSON object. One the proxy cannot read (a byte order mark,
  // UTF-16, a trailing comma) might still be read by a lenient provider, naming a model the
  // policy never saw and an output cap the estimate never held.
  if (raw && raw.byteLength > 0 && json === undefined) {
    throw new ProblemError("malformed-json", {
      detail: "The body is not a JSON object in UTF-8 (without a byte order mark)",
    });
  }
  const api: ApiKind = upstream.api;
  const model = upstream.modelFromPath ?? (typeof json?.model === "string" ? json.model : undefined);
  // The operation says whether it embeds: the embeddings endpoints, or a Bedrock invoke of an
  // embedding model. Titan's embedding and text models both take `inputText`; the model id tells
  // them apart (`amazon.titan-embed-…`), and a text generation config means text. A chat call
  // naming an "embed" model in its body is still a chat call.
  const embeddings =
    /(?:^|\/)embeddings$/.test(tail) ||
    (api === "bedrock-invoke" &&
      (model !== undefined
        ? /embed/i.test(model)
        : json !== undefined && "inputText" in json && !("textGenerationConfig" in json)));
  if (json) checkTierMembers(json);
  if (json && raw) checkCacheTtl(raw);
  return {
    body: withStreamUsage(api, json, raw),
    model,
    maxTokens: json ? outputCap(json) : undefined,
    choices: json ? choices(json) : 1,
    embeddings,
    unseenInput: json && raw ? findUnseenInput(raw, json) : undefined,
    cacheWrites: raw !== undefined && json !== undefined && setsCacheBreakpoints(raw),
  };
}

/**
 * The output cap the call names, read as the provider may: each family's name for it, Anthropic,
 * Mistral, Cohere and AI21 Jamba `max_tokens`; OpenAI `max_completion_tokens` /
 * `max_output_tokens`; Bedrock Converse `inferenceConfig.maxTokens` (and a `max_tokens` among its
 * `additionalModelRequestFields`); Amazon Nova `inferenceConfig.max_new_tokens`; Titan
 * `textGenerationConfig.maxTokenCount`; Meta Llama `max_gen_len`; AI21 Jurassic `maxTokens`. A
 * body naming several gets the largest (which one a provider reads is its own business). One
 * that is not a positive integer (a string, a fraction, zero, negative) may be read by a lenient
 * provider as something else, or as "no cap": undefined, so the estimate takes the model's most.
 */
function outputCap(json: Json): number | undefined {
  const member = (parent: unknown, name: string) =>
    parent && typeof parent === "object" && !Array.isArray(parent) ? (parent as Json)[name] : undefined;
  const extra = json.additionalModelRequestFields;
  const named = [
    json.max_tokens,
    json.max_completion_tokens,
    json.max_output_tokens,
    json.max_gen_len,
    json.maxTokens,
    member(json.inferenceConfig, "maxTokens"),
    member(json.inferenceConfig, "max_new_tokens"),
    member(json.textGenerationConfig, "maxTokenCount"),
    member(extra, "max_tokens"),
    member(extra, "max_new_tokens"),
    member(extra, "max_gen_len"),
  ].filter((v) => v !== undefined);
  let cap: number | undefined;
  for (const v of named) {
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) return undefined;
    cap = Math.max(cap ?? 0, v);
  }
  return cap;
}

/**
 * How many answers the call asks for, each up to the output cap: OpenAI's `n`, Cohere's
 * `num_generations`. Read leniently (a string of digits counts), never below one.
 */
function choices(json: Json): number {
  let most = 1;
  for (const v of [json.n, json.num_generations]) {
    const count = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
    if (Number.isFinite(count) && count > most) most = Math.ceil(count);
  }
  return most;
}

/**
 * The body to forward: an OpenAI-style stream that did not ask for usage gets `include_usage`
 * added, so the final chunk carries the counts. Without it the stream would be metered from its
 * text alone, with no input tokens, so a `stream` that is not a boolean (which a lenient provider
 * may still take for true) and a stream body that is not valid JSON (which a lenient parser may
 * still read, `NaN` and all) are refused rather than forwarded without it.
 */
function withStreamUsage(api: ApiKind, json: Json | undefined, raw: Uint8Array | undefined): Uint8Array | undefined {
  if (api !== "openai" || !json || !raw || json.stream === undefined || json.stream === false) return raw;
  if (json.stream !== true) {
    throw new ProblemError("validation-failed", {
      detail: "stream must be true or false",
      errors: [{ pointer: "/body/stream", message: "must be a boolean" }],
    });
  }
  const options = json.stream_options;
  if (options && typeof options === "object" && (options as Json).include_usage === true) return raw;
  // The one case that rewrites the body: parsed whole, as it is forwarded.
  let whole: Json;
  try {
    whole = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8")) as Json;
  } catch {
    throw new ProblemError("malformed-json", { detail: "The body of a streamed call is not valid JSON" });
  }
  whole.stream_options = { ...((whole.stream_options ?? {}) as Json), include_usage: true };
  return new TextEncoder().encode(JSON.stringify(whole));
}

/** The top-level members `analyzeRequest` reads. */
const READ = new Set([
  "model",
  "max_tokens",
  "max_completion_tokens",
  "max_output_tokens",
  "inferenceConfig",
  "textGenerationConfig",
  "max_gen_len",
  "maxTokens",
  "stream",
  "stream_options",
  "inputText",
  "additionalModelRequestFields",
  "n",
  "num_generations",
  "service_tier",
  "serviceTier",
  "performanceConfig",
  "guardrailConfig",
  "anthropic_beta",
  ...UNSEEN_INPUT_MEMBERS,
]);

/**
 * The members of a JSON object body named in `READ`, each parsed on its own; every other member is
 * skipped by matching its quotes and brackets. Undefined when the body is not a JSON object (then
 * `analyzeRequest` refuses it); what is skipped is checked by the provider, which parses it. A
 * member read here in other letter case, or named twice (at the top, or inside one of the
 * objects read) is a 400: parsers differ on which of the two counts (the first, the last, or an
 * error), so the one estimated and governed might not be the one the provider runs.
 */
export function readTopLevel(raw: Uint8Array): Json | undefined {
  const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (b.length > PARSE_WHOLE_BYTES) return scanTopLevel(b, READ, true);
  // A small body is parsed whole at once (native JSON.parse is quicker than scanning it here);
  // one that is not valid JSON is still scanned, since its skipped members are not checked.
  const text = b.toString("utf8");
  if (mayRepeat(text)) return scanTopLevel(b, READ, true);
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    return scanTopLevel(b, READ, true);
  }
  if (whole === null || typeof whole !== "object" || Array.isArray(whole)) return undefined;
  for (const key in whole) checkSpelling(key);
  const out: Json = {};
  for (const key of READ) if (Object.hasOwn(whole, key)) out[key] = (whole as Json)[key];
  return out;
}

/** Bodies up to this size are parsed whole rather than scanned. */
export const PARSE_WHOLE_BYTES = 8 * 1024;

/** Every member name read, at the top or one level down, as it appears unescaped in quotes. */
const NAMES_READ = [...READ, "max_new_tokens", "maxTokenCount", "include_usage", "latency"];
/**
 * Any of them in quotes, in one pass over the text: the opening quote and the name are taken, the
 * closing quote only looked at, so an occurrence that starts at the previous one's closing quote
 * is found too.
 */
const QUOTED_NAME = new RegExp(
  `"(?:${NAMES_READ.map((name) => name.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")).join("|")})(?=")`,
  "g",
);
/** Its `type` is read, a name too common in conversations to count: a body naming it is scanned. */
const SERVICE_TIER = '"serviceTier"';

/**
 * Whether a name read might occur twice in the body's text: one of them twice in quotes, or a
 * `\u` escape that could spell one. Otherwise JSON.parse of the whole body sees each name once,
 * and its answer is the provider's. The names are ASCII, and decoding UTF-8 (invalid sequences
 * included) keeps every ASCII byte as its character, so the decoded text has the quoted names the
 * bytes have.
 */
function mayRepeat(text: string): boolean {
  if (text.includes("\\u") || text.includes(SERVICE_TIER)) return true;
  QUOTED_NAME.lastIndex = 0;
  let seen: Set<string> | undefined;
  for (let found = QUOTED_NAME.exec(text); found !== null; found = QUOTED_NAME.exec(text)) {
    seen ??= new Set();
    if (seen.has(found[0])) return true;
    seen.add(found[0]);
  }
  return false;
}

/** The names read, by their lower case. */
const READ_BY_LOWER_CASE = new Map([...READ].map((name) => [name.toLowerCase(), name]));

/**
 * A member spelled like one read but in other letter case (`Model`, `MAX_TOKENS`) is a 400: a
 * provider matching names without regard to case would read it (and prefer it) where the
 * estimate and the policy read the other, or nothing.
 */
function checkSpelling(key: string): void {
  const name = READ_BY_LOWER_CASE.get(key.toLowerCase());
  if (name !== undefined && name !== key) {
    throw new ProblemError("bad-request", {
      detail: `The body names "${key.slice(0, 64)}"; spell it "${name}"`,
    });
  }
}

/**
 * The members named in `names` of a JSON object document, each parsed on its own and every other
 * member skipped (see `readTopLevel`); undefined when the document is not a JSON object. With
 * `refuseDuplicates`, a name of `names` that occurs twice is a 400, and so is a name occurring
 * twice directly inside an object value read. The document is fed once to the scanner that reads
 * answers as they stream (`TopLevelMembers`).
 */
export function scanTopLevel(
  b: Uint8Array,
  names: ReadonlySet<string> = READ,
  refuseDuplicates = false,
): Json | undefined {
  const members = new TopLevelMembers(names, {
    maxValueBytes: Number.POSITIVE_INFINITY,
    refuseDuplicates,
    ...(refuseDuplicates && names === READ ? { onName: checkSpelling } : {}),
  });
  members.push(b);
  return members.complete();
}

const CACHE_BREAKPOINTS = [Buffer.from('"cache_control"'), Buffer.from('"cachePoint"')];

/** Whether the body names a cache breakpoint (or may, spelled with escapes of plain letters). */
function setsCacheBreakpoints(raw: Uint8Array): boolean {
  const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return CACHE_BREAKPOINTS.some((name) => b.indexOf(name) >= 0) || escapesPlainLetters(b);
}

/** Prices per million tokens, i.e. micro-USD per token. */
export interface EstimatePrice {
  input: number;
  output: number;
  /** Input written to the cache (dearer than plain input at Anthropic's and Bedrock's rates). */
  cacheWrite?: number;
}

/**
 * The amount reserved before the call: the input estimated from the body size (a token is at
 * least about four bytes of JSON) plus the output cap at the model's output price; `outputCap` is
 * used when the request names none (the model's most).
 */
export function estimateMicroUsd(
  request: AnalyzedRequest,
  bodyBytes: number,
  price: EstimatePrice,
  outputCap: number,
): number {
  const input = Math.ceil(bodyBytes / 4);
  const output = request.embeddings ? 0 : (request.maxTokens ?? outputCap) * request.choices;
  // Behind a cache breakpoint the whole input may be written to the cache, at its own rate.
  const inputRate = request.cacheWrites ? Math.max(price.input, price.cacheWrite ?? 0) : price.input;
  return atMostSafe(Math.ceil(input * inputRate + output * price.output));
}

/**
 * The input a call reads beyond its body, bounded: the model's context window at its input price
 * for each sampling the call may run (`UnseenInput.samplings`), less the input already estimated
 * from the body's size. Undefined when the body shows all of the input. Where a spending limit
 * applies, it is reserved on top of `estimateMicroUsd` (docs/decisions/0053-input-the-body-does-not-show.md).
 */
export function unseenInputMicroUsd(
  request: AnalyzedRequest,
  bodyBytes: number,
  price: EstimatePrice,
): UnseenInputHold | undefined {
  const unseen = request.unseenInput;
  if (!unseen) return undefined;
  const tokens = Math.max(0, contextWindow(request.model) * unseen.samplings - Math.ceil(bodyBytes / 4));
  return { microUsd: Math.ceil(tokens * price.input), members: unseen.members };
}
