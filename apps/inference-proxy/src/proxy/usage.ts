import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { TopLevelMembers } from "./json-members.ts";
import { PARSE_WHOLE_BYTES, scanTopLevel } from "./request.ts";
import type { ApiKind } from "./target.ts";

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * The most tokens of a kind one call is counted: far past any model's context window or output
 * (ten samplings of a million-token window), and small enough that the cost of as many at any
 * rate is an exact integer the usage record stores. An answer reporting more (1e300) is counted
 * at this bound, rather than as a record audit cannot store, which left the call unrecorded and
 * its reservation held.
 */
export const MAX_COUNTED_TOKENS = 1_000_000_000;

const n = (v: unknown): number => (typeof v === "number" && v > 0 ? Math.min(MAX_COUNTED_TOKENS, Math.floor(v)) : 0);
type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v && typeof v === "object" ? (v as Json) : undefined);

/** The members of a JSON answer `readDocument` reads. */
const DOCUMENT_MEMBERS: ReadonlySet<string> = new Set(["model", "usage", "inputTextTokenCount"]);

/**
 * The largest JSON body kept to read its usage at the end; past it the answer is read as it streams
 * past for its top-level members only (`TopLevelMembers`), holding only the members it reads.
 */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

/**
 * Reads token usage from a response as it streams past, without holding it: JSON bodies
 * (Anthropic, Bedrock invoke incl. embeddings, Converse, OpenAI-style), SSE (Anthropic
 * `message_start`/`message_delta`, OpenAI chunks with `usage`) and AWS event-stream (invoke
 * `chunk` events with `amazon-bedrock-invocationMetrics`, Converse `metadata`). Until the final
 * numbers arrive, output is counted from the text deltas seen (about four characters a token).
 */
export class UsageMeter {
  private readonly format: "json" | "sse" | "eventstream";
  private readonly api: ApiKind;
  private usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  private finalOutput = false;
  private deltaChars = 0;
  private deltaCount = 0;
  private json: Uint8Array[] = [];
  private jsonBytes = 0;
  /** Reads a JSON answer too large to keep, as it streams. */
  private members: TopLevelMembers | undefined;
  private text = "";
  private pending: Uint8Array = new Uint8Array(0);
  /** Built for a streamed answer only: most answers are one JSON document. */
  private decoder: InstanceType<typeof TextDecoder> | undefined;
  private codec: EventStreamCodec | undefined;
  private counted = false;
  /** An event stream whose framing broke: the rest of it is not read. */
  private unreadable = false;
  model: string | undefined;

  constructor(api: ApiKind, contentType: string, headers?: Record<string, string | string[] | undefined>) {
    this.api = api;
    const ct = contentType.toLowerCase();
    this.format = ct.includes("text/event-stream")
      ? "sse"
      : ct.includes("application/vnd.amazon.eventstream")
        ? "eventstream"
        : "json";
    // Bedrock reports counts in headers of non-streaming invocations too.
    const hIn = Number(headers?.["x-amzn-bedrock-input-token-count"]);
    const hOut = Number(headers?.["x-amzn-bedrock-output-token-count"]);
    if (hIn > 0) {
      this.usage.inputTokens = n(hIn);
      this.counted = true;
    }
    if (hOut > 0) {
      this.counted = true;
      this.usage.outputTokens = n(hOut);
      this.finalOutput = true;
    }
  }

  private textDecoder(): InstanceType<typeof TextDecoder> {
    this.decoder ??= new TextDecoder();
    return this.decoder;
  }

  private eventStreamCodec(): EventStreamCodec {
    this.codec ??= new EventStreamCodec(toUtf8, fromUtf8);
    return this.codec;
  }

  push(chunk: Uint8Array): void {
    try {
      if (this.format === "json") {
        this.jsonBytes += chunk.byteLength;
        if (this.members) this.members.push(chunk);
        else if (this.jsonBytes <= MAX_JSON_BYTES) this.json.push(chunk);
        else {
          // Too large to keep: what was kept is read again as a stream, then dropped.
          this.members = new TopLevelMembers(DOCUMENT_MEMBERS);
          for (const kept of this.json) this.members.push(kept);
          this.json = [];
          this.members.push(chunk);
        }
      } else if (this.format === "sse") this.pushSse(this.textDecoder().decode(chunk, { stream: true }));
      else this.pushFrames(chunk);
    } catch {
      // Metering never breaks the stream; what was read so far still counts.
    }
  }

  /**
   * Whether the answer reported token counts (in its body, its events or its headers), read after
   * `result()`. An answer that reports none is no free call: the caller counts it from its bytes.
   */
  get reported(): boolean {
    return this.counted;
  }

  /** The bytes of a JSON answer received so far (0 for a stream of events). */
  get jsonAnswerBytes(): number {
    return this.format === "json" ? this.jsonBytes : 0;
  }

  /** The usage: final when the response completed, otherwise what was seen so far. */
  result(): TokenUsage {
    if (this.members) {
      this.readDocument(this.members.result());
      this.members = undefined;
    } else if (this.format === "json" && this.json.length > 0) {
      const first = this.json[0] as Uint8Array;
      const body =
        this.json.length === 1
          ? Buffer.from(first.buffer, first.byteOffset, first.byteLength)
          : Buffer.concat(this.json, this.jsonBytes);
      try {
        // A large answer (a long completion) is not built whole: only the members read here are
        // parsed, the text it carries is skipped over.
        this.readDocument(
          body.length <= PARSE_WHOLE_BYTES ? JSON.parse(body.toString("utf8")) : scanTopLevel(body, DOCUMENT_MEMBERS),
        );
      } catch {
        // Not JSON (an upstream error page): header counts only.
      }
      this.json = [];
    }
    const u = { ...this.usage };
    if (!this.finalOutput) u.outputTokens = Math.max(u.outputTokens, Math.ceil(this.deltaChars / 4), this.deltaCount);
    return u;
  }

  private readDocument(doc: unknown): void {
    const d = obj(doc);
    if (!d) return;
    if (typeof d.model === "string") this.model ??= d.model;
    const u = obj(d.usage);
    if (u) {
      if ("prompt_tokens" in u) this.openAiUsage(u);
      else if ("inputTokens" in u) this.converseUsage(u);
      else this.anthropicUsage(u);
    } else if ("inputTextTokenCount" in d) {
      // Titan embeddings through invoke.
      this.counted = true;
      this.usage.inputTokens = n(d.inputTextTokenCount);
      this.finalOutput = true;
    }
  }

  private anthropicUsage(u: Json, final = true): void {
    this.counted = true;
    if ("input_tokens" in u) this.usage.inputTokens = n(u.input_tokens);
    if ("cache_read_input_tokens" in u) this.usage.cacheReadTokens = n(u.cache_read_input_tokens);
    if ("cache_creation_input_tokens" in u) this.usage.cacheWriteTokens = n(u.cache_creation_input_tokens);
    if ("output_tokens" in u) {
      this.usage.outputTokens = n(u.output_tokens);
      if (final) this.finalOutput = true;
    }
  }

  private converseUsage(u: Json): void {
    this.counted = true;
    this.usage.inputTokens = n(u.inputTokens);
    this.usage.outputTokens = n(u.outputTokens);
    this.usage.cacheReadTokens = n(u.cacheReadInputTokens);
    this.usage.cacheWriteTokens = n(u.cacheWriteInputTokens);
    this.finalOutput = true;
  }

  private openAiUsage(u: Json): void {
    this.counted = true;
    const cached = n(obj(u.prompt_tokens_details)?.cached_tokens);
    this.usage.inputTokens = Math.max(0, n(u.prompt_tokens) - cached);
    this.usage.cacheReadTokens = cached;
    this.usage.outputTokens = n(u.completion_tokens);
    this.finalOutput = true;
  }

  private delta(text: unknown): void {
    if (typeof text !== "string") return;
    this.deltaChars += text.length;
    this.deltaCount++;
  }

  /** One streamed event of the Anthropic Messages API (SSE data, or a Bedrock invoke chunk). */
  private anthropicEvent(e: Json): void {
    switch (e.type) {
      case "message_start": {
        const m = obj(e.message);
        if (typeof m?.model === "string") this.model ??= m.model;
        const u = obj(m?.usage);
        // message_start's output_tokens is a placeholder; the final count comes in message_delta.
        if (u) this.anthropicUsage(u, false);
        if (u && !this.finalOutput) this.usage.outputTokens = 0;
        break;
      }
      case "content_block_delta": {
        const d = obj(e.delta);
        this.delta(d?.text ?? d?.partial_json ?? d?.thinking);
        break;
      }
      case "message_delta": {
        const u = obj(e.usage);
        if (u) this.anthropicUsage(u);
        break;
      }
    }
    const metrics = obj(e["amazon-bedrock-invocationMetrics"]);
    if (metrics) {
      this.counted = true;
      this.usage.inputTokens = n(metrics.inputTokenCount) || this.usage.inputTokens;
      this.usage.outputTokens = n(metrics.outputTokenCount) || this.usage.outputTokens;
      if ("cacheReadInputTokenCount" in metrics) this.usage.cacheReadTokens = n(metrics.cacheReadInputTokenCount);
      if ("cacheWriteInputTokenCount" in metrics) this.usage.cacheWriteTokens = n(metrics.cacheWriteInputTokenCount);
      this.finalOutput = true;
    }
  }

  private pushSse(text: string): void {
    this.text += text;
    let end = this.text.search(/\r?\n\r?\n/);
    while (end >= 0) {
      const block = this.text.slice(0, end);
      this.text = this.text.slice(end).replace(/^\r?\n\r?\n/, "");
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      if (data && data !== "[DONE]") {
        // An event that is not JSON is skipped: the ones after it (the usage) are still read.
        try {
          const e = obj(JSON.parse(data));
          if (e) this.sseEvent(e);
        } catch {
          // Skipped; the stream reads on.
        }
      }
      end = this.text.search(/\r?\n\r?\n/);
    }
  }

  private sseEvent(e: Json): void {
    if (this.api === "openai") {
      if (typeof e.model === "string") this.model ??= e.model;
      const u = obj(e.usage);
      if (u) this.openAiUsage(u);
      for (const choice of Array.isArray(e.choices) ? e.choices : []) this.delta(obj(obj(choice)?.delta)?.content);
      return;
    }
    this.anthropicEvent(e);
  }

  private frameEvent(bytes: Uint8Array): void {
    const message = this.eventStreamCodec().decode(bytes);
    const type = message.headers[":event-type"]?.value;
    const body = obj(JSON.parse(this.textDecoder().decode(message.body)));
    if (!body) return;
    if (type === "chunk" && typeof body.bytes === "string") {
      const e = obj(JSON.parse(Buffer.from(body.bytes, "base64").toString("utf8")));
      if (e) this.anthropicEvent(e);
    } else if (type === "metadata") {
      const u = obj(body.usage);
      if (u) this.converseUsage(u);
    } else if (type === "contentBlockDelta") {
      this.delta(obj(body.delta)?.text);
    }
  }

  private pushFrames(chunk: Uint8Array): void {
    if (this.unreadable) return;
    const joined = new Uint8Array(this.pending.byteLength + chunk.byteLength);
    joined.set(this.pending, 0);
    joined.set(chunk, this.pending.byteLength);
    let offset = 0;
    while (joined.byteLength - offset >= 4) {
      const view = new DataView(joined.buffer, joined.byteOffset + offset);
      const length = view.getUint32(0);
      // Shorter than a frame's prelude and checksum: the stream is not event-stream; nothing more is read.
      if (length < 16) {
        this.pending = new Uint8Array(0);
        this.unreadable = true;
        return;
      }
      if (joined.byteLength - offset < length) break;
      const bytes = joined.subarray(offset, offset + length);
      offset += length;
      // A frame that cannot be read (its body not JSON) is skipped; its length, read above, still
      // says where the next one starts.
      try {
        this.frameEvent(bytes);
      } catch {
        // Skipped; the stream reads on.
      }
    }
    this.pending = joined.slice(offset);
  }
}
