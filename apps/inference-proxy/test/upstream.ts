import type { IncomingMessage, ServerResponse } from "node:http";
import { type LocalServer, startLocalServer } from "@agentplane/testkit";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";

/** Credentials the fake providers accept; anything else answers 403 like the real ones. */
export const CREDS = {
  bearer: "bedrock-bearer-key-123",
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session-token-xyz",
  cloudBKey: "foundry-key-456",
};

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  auth: string;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One AWS event-stream frame as the Bedrock runtime sends it. */
export function frame(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

const chunk = (event: unknown) => frame("chunk", { bytes: Buffer.from(JSON.stringify(event)).toString("base64") });

/** Token counts every fake answer reports (cache tokens included) so tests can price them by hand. */
export const USAGE = { input: 120, output: 40, cacheRead: 1000, cacheWrite: 200 };

function anthropicMessage(model: string) {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "Hello from upstream" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: USAGE.input,
      output_tokens: USAGE.output,
      cache_read_input_tokens: USAGE.cacheRead,
      cache_creation_input_tokens: USAGE.cacheWrite,
    },
  };
}

function anthropicEvents(model: string, words: string[]): Record<string, unknown>[] {
  return [
    {
      type: "message_start",
      message: {
        ...anthropicMessage(model),
        content: [],
        stop_reason: null,
        usage: {
          input_tokens: USAGE.input,
          output_tokens: 1,
          cache_read_input_tokens: USAGE.cacheRead,
          cache_creation_input_tokens: USAGE.cacheWrite,
        },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...words.map((w) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: w } })),
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: USAGE.output },
    },
    { type: "message_stop" },
  ];
}

/** Log probabilities of a long answer: about 10 MB at 20 alternatives a token. */
function logprobs(alternatives: number) {
  const top = Array.from({ length: alternatives }, (_, i) => ({ token: ` word${i}`, logprob: -i, bytes: [119] }));
  return Array.from({ length: 40_000 }, () => ({
    token: " word",
    logprob: -0.25,
    bytes: [32, 119],
    top_logprobs: top,
  }));
}

export interface FakeUpstream extends LocalServer {
  seen: SeenRequest[];
  /** While set, streams stop after their first text delta until `release()`. */
  hold: boolean;
  /** While set, streams send their headers, then wait for `release()` before any of their body. */
  holdBeforeBody: boolean;
  /** True while a stream waits for `release()`. */
  heldNow: boolean;
  /** While set, a held stream breaks off (its connection destroyed) when released. */
  breakOff: boolean;
  /** Headers added to every Anthropic Messages answer (a provider's headers the proxy must not trust). */
  answerHeaders: Record<string, string>;
  release(): void;
  /** Resolves when a held stream's connection was closed by the proxy (client abort). */
  aborted: Promise<void>;
  /** Requests rejected by the auth check. */
  rejected: number;
}

async function verifySigV4(req: IncomingMessage, body: Buffer, region: string): Promise<boolean> {
  const auth = String(req.headers.authorization ?? "");
  const signed = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(";") ?? [];
  const headers: Record<string, string> = {};
  for (const name of signed) headers[name] = String(req.headers[name] ?? "");
  const url = new URL(req.url ?? "/", "http://x");
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const amzDate = String(req.headers["x-amz-date"]);
  const signer = new SignatureV4({
    service: "bedrock",
    region,
    sha256: Sha256,
    credentials: {
      accessKeyId: CREDS.accessKeyId,
      secretAccessKey: CREDS.secretAccessKey,
      sessionToken: CREDS.sessionToken,
    },
  });
  const date = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const expected = await signer.sign(
    new HttpRequest({ method: req.method ?? "GET", hostname: "x", path: url.pathname, query, headers, body }),
    { signingDate: date, signableHeaders: new Set(signed) },
  );
  return expected.headers.authorization === auth && req.headers["x-amz-security-token"] === CREDS.sessionToken;
}

/**
 * A local stand-in for every provider API, speaking the real wire formats: Bedrock runtime
 * (invoke, invoke-with-response-stream as AWS event-stream, converse, converse-stream), the
 * Anthropic Messages API (JSON and SSE) and the OpenAI-style API (chat, SSE, embeddings). It
 * checks the credentials it receives: SigV4 recomputed over the received bytes, or the key headers.
 */
export async function startFakeUpstream(options: { sigv4?: boolean; region?: string } = {}): Promise<FakeUpstream> {
  let releaseHold: () => void = () => {};
  let held = new Promise<void>((r) => {
    releaseHold = r;
  });
  let markAborted: () => void = () => {};
  const state = {
    seen: [] as SeenRequest[],
    hold: false,
    holdBeforeBody: false,
    heldNow: false,
    breakOff: false,
    answerHeaders: {} as Record<string, string>,
    rejected: 0,
    aborted: new Promise<void>((r) => {
      markAborted = r;
    }),
    release() {
      releaseHold();
      held = new Promise<void>((r) => {
        releaseHold = r;
      });
    },
  };

  async function handler(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const path = (req.url ?? "/").split("?")[0] as string;
    const isBedrock = path.startsWith("/model/");
    let auth = "none";
    if (isBedrock) {
      if (options.sigv4) auth = (await verifySigV4(req, raw, options.region ?? "us-east-1")) ? "sigv4" : "bad";
      else auth = req.headers.authorization === `Bearer ${CREDS.bearer}` ? "bearer" : "bad";
    } else if (req.headers["x-api-key"]) {
      auth = [CREDS.bearer, CREDS.cloudBKey].includes(String(req.headers["x-api-key"])) ? "x-api-key" : "bad";
    } else if (req.headers["api-key"]) {
      auth = req.headers["api-key"] === CREDS.cloudBKey ? "api-key" : "bad";
    } else if (req.headers.authorization === `Bearer ${CREDS.bearer}`) auth = "bearer";
    state.seen.push({
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: raw.toString(),
      auth,
    });
    if (auth === "bad" || auth === "none") {
      state.rejected++;
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "The security token included in the request is invalid." }));
      return;
    }
    const body = raw.length ? (JSON.parse(raw.toString()) as Record<string, unknown>) : {};
    res.on("close", () => {
      if (!res.writableFinished) markAborted();
    });
    const words = ["Hel", "lo ", "from ", "up", "stream"];
    const streamOut = async (parts: (string | Uint8Array)[], contentType: string) => {
      res.writeHead(200, { "content-type": contentType });
      if (state.holdBeforeBody) {
        res.flushHeaders();
        state.heldNow = true;
        await held;
        state.heldNow = false;
        if (res.destroyed) return;
      }
      for (const [i, part] of parts.entries()) {
        res.write(part);
        // Held after the first text delta (Anthropic streams) or the first part (others).
        if (i === Math.min(2, parts.length - 2) && state.hold) {
          state.heldNow = true;
          await held;
          state.heldNow = false;
          if (state.breakOff) {
            res.destroy();
            return;
          }
        }
        if (res.destroyed) return;
      }
      res.end();
    };
    const m = /^\/model\/([^/]+)\/([a-z-]+)$/.exec(path);
    if (m) {
      const model = decodeURIComponent(m[1] as string);
      const op = m[2];
      if (model === "no-such-model") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: "unknown model" }));
      } else if (op === "invoke" && /embed/.test(model)) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ embedding: [0.1, 0.2], inputTextTokenCount: 17 }));
      } else if (op === "invoke") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(anthropicMessage(model)));
      } else if (op === "invoke-with-response-stream") {
        const events = anthropicEvents(model, words);
        const last = events.length - 1;
        events[last] = {
          ...events[last],
          "amazon-bedrock-invocationMetrics": {
            inputTokenCount: USAGE.input,
            outputTokenCount: USAGE.output,
            cacheReadInputTokenCount: USAGE.cacheRead,
            cacheWriteInputTokenCount: USAGE.cacheWrite,
            invocationLatency: 10,
            firstByteLatency: 5,
          },
        };
        await streamOut(events.map(chunk), "application/vnd.amazon.eventstream");
      } else if (op === "converse") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            output: { message: { role: "assistant", content: [{ text: "Hello from upstream" }] } },
            stopReason: "end_turn",
            usage: {
              inputTokens: USAGE.input,
              outputTokens: USAGE.output,
              totalTokens: USAGE.input + USAGE.output,
              cacheReadInputTokens: USAGE.cacheRead,
              cacheWriteInputTokens: USAGE.cacheWrite,
            },
            metrics: { latencyMs: 10 },
          }),
        );
      } else if (op === "converse-stream") {
        await streamOut(
          [
            frame("messageStart", { role: "assistant" }),
            ...words.map((w) => frame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: w } })),
            frame("contentBlockStop", { contentBlockIndex: 0 }),
            frame("messageStop", { stopReason: "end_turn" }),
            frame("metadata", {
              usage: {
                inputTokens: USAGE.input,
                outputTokens: USAGE.output,
                totalTokens: USAGE.input + USAGE.output,
                cacheReadInputTokens: USAGE.cacheRead,
                cacheWriteInputTokens: USAGE.cacheWrite,
              },
              metrics: { latencyMs: 10 },
            }),
          ],
          "application/vnd.amazon.eventstream",
        );
      } else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: "unknown operation" }));
      }
      return;
    }
    if (path.endsWith("/v1/messages")) {
      const model = String(body.model ?? "claude-sonnet-4-5");
      if (body.stream) {
        const events = anthropicEvents(model, words);
        await streamOut(
          events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`),
          "text/event-stream",
        );
      } else {
        res.writeHead(200, { ...state.answerHeaders, "content-type": "application/json" });
        res.end(JSON.stringify(anthropicMessage(model)));
      }
      return;
    }
    if (path.endsWith("/embeddings")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          object: "list",
          data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
          model: body.model,
          usage: { prompt_tokens: 9, total_tokens: 9 },
        }),
      );
      return;
    }
    if (path.endsWith("/chat/completions")) {
      const model = String(body.model ?? "gpt");
      const usage = {
        prompt_tokens: USAGE.input + USAGE.cacheRead,
        completion_tokens: USAGE.output,
        total_tokens: USAGE.input + USAGE.cacheRead + USAGE.output,
        prompt_tokens_details: { cached_tokens: USAGE.cacheRead },
      };
      if (body.stream) {
        const base = { id: "c1", object: "chat.completion.chunk", created: 1, model };
        const parts: Record<string, unknown>[] = words.map((w) => ({
          ...base,
          choices: [{ index: 0, delta: { content: w }, finish_reason: null }],
        }));
        parts.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
        const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
        if (includeUsage) parts.push({ ...base, choices: [], usage });
        await streamOut(
          [...parts.map((p) => `data: ${JSON.stringify(p)}\n\n`), "data: [DONE]\n\n"],
          "text/event-stream",
        );
      } else {
        const answer = JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1,
          model,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "Hello from upstream" },
              finish_reason: "stop",
              // Asked for, each token's alternatives: answers of many megabytes.
              ...(body.logprobs === true ? { logprobs: { content: logprobs(Number(body.top_logprobs ?? 0)) } } : {}),
            },
          ],
          usage,
        });
        if (state.hold) {
          // Held (and broken off, if told) halfway through, before its usage.
          const half = Math.floor(answer.length / 2);
          await streamOut([answer.slice(0, half), answer.slice(half)], "application/json");
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(answer);
      }
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: `no such path ${path}` }));
  }

  const server = await startLocalServer(handler);
  // The handler reads `hold` from this same object, so tests can flip it.
  return Object.assign(state, server);
}
