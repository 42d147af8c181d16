import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { type LocalServer, readBody, startLocalServer } from "@agentplane/testkit";
import { EventStreamCodec } from "@smithy/eventstream-codec";

export type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

export interface Reply {
  content: ReplyBlock[];
  stopReason?: "end_turn" | "tool_use";
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** That error body (default: a provider's `{"type":"error","error":{…}}`). */
  errorBody?: Record<string, unknown>;
  delayMs?: number;
  /** Pause after each streamed text delta, so a client can be seen showing a half-written answer. */
  chunkDelayMs?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeModel {
  url: string;
  /** Model calls (embedding calls are in embeddingRequests). */
  requests: RecordedRequest[];
  embeddingRequests: RecordedRequest[];
  /** Decides each answer; the default echoes the last user text. */
  respond: (body: Record<string, unknown>, request: RecordedRequest) => Reply | Promise<Reply>;
  /** The embedding of one text (1024 values); the default hashes words into dimensions. */
  embed: (text: string) => number[];
  /** Answer embedding calls with this HTTP status instead (e.g. 500, or 404 for a missing deployment). */
  embeddingStatus?: number;
  close(): Promise<void>;
  server: LocalServer;
}

const utf8 = {
  toUtf8: (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8"),
  fromUtf8: (text: string) => new Uint8Array(Buffer.from(text, "utf8")),
};
const codec = new EventStreamCodec(utf8.toUtf8, utf8.fromUtf8);

export function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    const texts = (m.content as Array<{ type: string; text?: string }>).filter((b) => b.type === "text");
    if (texts.length > 0) return texts.map((b) => b.text).join("\n");
  }
  return "";
}

function messageJson(reply: Reply, model: string) {
  return {
    id: `msg_fake_${Math.random().toString(36).slice(2)}`,
    type: "message",
    role: "assistant",
    model,
    content: reply.content,
    stop_reason: reply.stopReason ?? (reply.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

/** The Messages API streaming events for one reply (what the SSE and Bedrock chunk frames carry). */
function streamEvents(reply: Reply, model: string): Array<Record<string, unknown>> {
  const full = messageJson(reply, model);
  const events: Array<Record<string, unknown>> = [
    {
      type: "message_start",
      message: { ...full, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } },
    },
  ];
  reply.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      const mid = Math.ceil(block.text.length / 2);
      for (const part of [block.text.slice(0, mid), block.text.slice(mid)]) {
        if (part) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: part } });
      }
    } else {
      events.push({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      events.push({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: full.stop_reason, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  events.push({ type: "message_stop" });
  return events;
}

async function writeSse(res: ServerResponse, events: Array<Record<string, unknown>>, chunkDelayMs = 0): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) {
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    if (chunkDelayMs > 0 && event.type === "content_block_delta") await sleep(chunkDelayMs);
  }
  res.end();
}

function writeBedrockEventStream(res: ServerResponse, events: Array<Record<string, unknown>>): void {
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
  for (const event of events) {
    const frame = codec.encode({
      headers: {
        ":event-type": { type: "string", value: "chunk" },
        ":content-type": { type: "string", value: "application/json" },
        ":message-type": { type: "string", value: "event" },
      },
      body: utf8.fromUtf8(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString("base64") })),
    });
    res.write(frame);
  }
  res.end();
}

/** Words hashed into 1024 dimensions, normalized: texts sharing words are similar. */
export function hashedEmbedding(text: string): number[] {
  const v = new Array<number>(1024).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    v[(h >>> 0) % 1024] = (v[(h >>> 0) % 1024] ?? 0) + 1;
  }
  const norm = Math.sqrt(v.reduce((a, x) => a + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

/** Azure OpenAI embeddings and the Bedrock embedding model's invoke; false when the path is not one. */
function answerEmbedding(fake: FakeModel, path: string, body: Record<string, unknown>, res: ServerResponse): boolean {
  const azure = /\/openai\/deployments\/([^/]+)\/embeddings/.exec(path);
  const bedrock = /\/model\/([^/]*embed[^/]*)\/invoke$/.exec(path.split("?")[0] ?? "");
  if (!azure && !bedrock) return false;
  if (fake.embeddingStatus) {
    res.writeHead(fake.embeddingStatus, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: "DeploymentNotFound", message: "fake embedding failure" } }));
    return true;
  }
  res.writeHead(200, { "content-type": "application/json" });
  if (bedrock) {
    res.end(JSON.stringify({ embedding: fake.embed(String(body.inputText ?? "")), inputTextTokenCount: 3 }));
    return true;
  }
  const input = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input ?? "")];
  res.end(
    JSON.stringify({
      object: "list",
      model: body.model,
      data: input.map((text, index) => ({ object: "embedding", index, embedding: fake.embed(text) })),
      usage: { prompt_tokens: 3, total_tokens: 3 },
    }),
  );
  return true;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A local stand-in for every provider: Messages API JSON and SSE, and Bedrock invoke paths. */
export async function startFakeModel(): Promise<FakeModel> {
  const fake: Omit<FakeModel, "url" | "close" | "server"> = {
    requests: [],
    embeddingRequests: [],
    respond: (body) => ({ content: [{ type: "text", text: `echo: ${lastUserText(body)}` }] }),
    embed: hashedEmbedding,
  };
  const server = await startLocalServer(async (req, res) => {
    const raw = await readBody(req);
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const path = req.url ?? "/";
    const recorded: RecordedRequest = { method: req.method ?? "GET", path, headers: req.headers, body };
    if (answerEmbedding(fake as FakeModel, path, body, res)) {
      fake.embeddingRequests.push(recorded);
      return;
    }
    fake.requests.push(recorded);
    const reply = await fake.respond(body, recorded);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.status && reply.status >= 400) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(
        JSON.stringify(reply.errorBody ?? { type: "error", error: { type: "api_error", message: "fake failure" } }),
      );
      return;
    }
    const bedrock = /^(.*)\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(path.split("?")[0] ?? "");
    if (bedrock) {
      const model = decodeURIComponent(bedrock[2] ?? "");
      if (bedrock[3] === "invoke") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(messageJson(reply, model)));
      } else {
        writeBedrockEventStream(res, streamEvents(reply, model));
      }
      return;
    }
    if (/\/v1\/messages(\?.*)?$/.test(path)) {
      const model = String(body.model ?? "");
      if (body.stream) await writeSse(res, streamEvents(reply, model), reply.chunkDelayMs);
      else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(messageJson(reply, model)));
      }
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: `no route ${path}` }));
  });
  return Object.assign(fake, { url: server.url, server, close: () => server.close() }) as FakeModel;
}
