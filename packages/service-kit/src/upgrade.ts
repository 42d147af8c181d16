import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";

/** Hop-by-hop headers (RFC 9110 §7.6.1): never forwarded by a proxy. */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/**
 * Whether a request asks for a WebSocket (`Upgrade: websocket`), the only upgrade the platform
 * serves. Any other (`h2c`, which `curl --http2` sends on an http:// URL) is answered as the plain
 * request it also is, as RFC 9110 lets a server that does not switch do.
 */
export function asksForWebSocket(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return typeof upgrade === "string" && upgrade.split(",").some((p) => p.trim().toLowerCase() === "websocket");
}

const GUARDED = Symbol("agentplane.guarded");

/**
 * Gives a socket an `'error'` listener that destroys it. Node's HTTP server takes its own listener
 * off a socket it hands to `'upgrade'`, so without this a client that resets the connection
 * (ECONNRESET) raises an unhandled `'error'` event that ends the process. Idempotent.
 */
export function guardSocket(socket: Duplex): Duplex {
  const marked = socket as Duplex & { [GUARDED]?: true };
  if (marked[GUARDED]) return socket;
  marked[GUARDED] = true;
  socket.on("error", () => socket.destroy());
  return socket;
}

/**
 * Answers an HTTP upgrade that will not be accepted with a problem+json response, then closes;
 * `instance` is the request path the problem is about, as on plain HTTP answers.
 */
export function rejectUpgrade(socket: Duplex, error: ProblemError, requestId?: string, instance?: string): void {
  guardSocket(socket);
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(error.toBody({ ...(instance ? { instance } : {}), ...(requestId ? { requestId } : {}) }));
  const extra = Object.entries(error.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.end(
    `HTTP/1.1 ${error.status} ${error.title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`,
  );
}

/** The most of an upgrade's answer head read to rewrite its headers; an upstream sending more is dropped. */
const MAX_ANSWER_HEAD_BYTES = 64 * 1024;

/**
 * Passes `upstream` on to `socket` once the head of its answer (status line and headers) has been
 * read and each header line put through `rewrite` (undefined leaves the line out); the body and
 * frames after it pass through unparsed. Calls `fail` for a head that never ends within the bound.
 */
function pipeWithAnswerHeaders(
  upstream: Duplex,
  socket: Duplex,
  rewrite: (name: string, value: string) => string | undefined,
  fail: () => void,
): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf("\r\n\r\n");
    if (end < 0) {
      if (buffered.length > MAX_ANSWER_HEAD_BYTES) {
        upstream.off("data", onData);
        fail();
      }
      return;
    }
    upstream.off("data", onData);
    const [status, ...lines] = buffered.subarray(0, end).toString("latin1").split("\r\n");
    const kept = [status];
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon);
      const value = rewrite(name.trim(), line.slice(colon + 1).trim());
      if (value !== undefined) kept.push(`${name}: ${value}`);
    }
    socket.write(Buffer.from(`${kept.join("\r\n")}\r\n\r\n`, "latin1"));
    const rest = buffered.subarray(end + 4);
    if (rest.length) socket.write(rest);
    // Synchronously, inside this 'data' event: no chunk can pass between the listener and the pipe.
    upstream.pipe(socket);
  };
  upstream.on("data", onData);
}

/**
 * Replays an upgrade request on an open upstream connection and splices the two sockets, so the
 * handshake and every frame pass through unparsed. `drop` names headers (lower case) left out;
 * `host` replaces the Host header; `answerHeader`, when given, rewrites (or, returning undefined,
 * drops) each header of the upstream's answer, the frames after it still pass unparsed. Either
 * side closing or failing closes both.
 */
export function spliceUpgrade(
  upstream: Duplex,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: {
    host: string;
    drop?: ReadonlySet<string>;
    /** An upstream that sends nothing back within `ms` is answered 504 with `detail` and dropped. */
    answerWithin?: { ms: number; detail: string };
    answerHeader?: (name: string, value: string) => string | undefined;
  },
): void {
  guardSocket(upstream);
  guardSocket(socket);
  let answeredForIt = false;
  const close = () => {
    upstream.destroy();
    // The 504 written for a silent upstream must reach the client before its socket closes.
    if (!answeredForIt) socket.destroy();
  };
  // The client may have gone while the upstream connection was being opened.
  if (socket.destroyed || upstream.destroyed) {
    close();
    return;
  }
  const lines = [`${req.method} ${req.url} HTTP/1.1`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (lower === "host" || options.drop?.has(lower)) continue;
    lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
  }
  lines.push(`Host: ${options.host}`);
  upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (head.length) upstream.write(head);
  if (options.answerHeader) pipeWithAnswerHeaders(upstream, socket, options.answerHeader, close);
  else upstream.pipe(socket);
  socket.pipe(upstream);
  if (options.answerWithin) {
    const { ms, detail } = options.answerWithin;
    const timer = setTimeout(() => {
      answeredForIt = true;
      upstream.unpipe(socket);
      rejectUpgrade(socket, new ProblemError("gateway-timeout", { detail }));
      upstream.destroy();
    }, ms);
    upstream.once("data", () => clearTimeout(timer));
    upstream.once("close", () => clearTimeout(timer));
  }
  upstream.on("error", close);
  socket.on("error", close);
  upstream.on("close", close);
  socket.on("close", close);
}
