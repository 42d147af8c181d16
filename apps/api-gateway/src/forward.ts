import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { INTERNAL_IDENTITY_HEADER, REQUEST_ID_HEADER, SANDBOX_INGRESS_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { HOP_BY_HOP_HEADERS, type OutgoingRequest } from "@agentplane/service-kit";
import { injectTraceparent } from "@agentplane/telemetry";

/**
 * The caller's SigV4 header as the gateway passes it to connections-svc on the AWS proxy routes
 * (the service and region of its credential scope): only the gateway says it.
 */
export const AWS_AUTHORIZATION_HEADER = "x-agentplane-aws-authorization";

/**
 * Hop-by-hop headers, credentials and what only the gateway says (the ingress target: from a
 * caller, it would have the sandbox service serve a sandbox's port; the SigV4 header of an AWS
 * call) that must not travel past it.
 */
const DROPPED = new Set([
  ...HOP_BY_HOP_HEADERS,
  "authorization",
  INTERNAL_IDENTITY_HEADER,
  SANDBOX_INGRESS_HEADER,
  AWS_AUTHORIZATION_HEADER,
]);

/**
 * The headers the service receives (lower-case names): the caller's, less hop-by-hop headers and
 * credentials, plus the identity and the request id. The address the caller reached the gateway
 * at travels as `x-forwarded-host`/`-proto` (whatever the caller sent in those is replaced), so a
 * service can build links to the gateway.
 */
export function forwardHeaders(
  incoming: Headers | IncomingHttpHeaders,
  identity: string | undefined,
  requestId: string,
  url: URL,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (incoming instanceof Headers) {
    incoming.forEach((value, key) => {
      if (!DROPPED.has(key)) headers[key] = value;
    });
  } else {
    for (const key in incoming) {
      const value = incoming[key];
      if (value !== undefined && !DROPPED.has(key)) headers[key] = Array.isArray(value) ? value.join(", ") : value;
    }
  }
  if (identity) headers[INTERNAL_IDENTITY_HEADER] = identity;
  headers[REQUEST_ID_HEADER] = requestId;
  // The request's span continues in the service (the caller's own traceparent was its parent).
  injectTraceparent(headers);
  headers["x-forwarded-host"] = url.host;
  headers["x-forwarded-proto"] = url.protocol.slice(0, -1);
  return headers;
}

/** What the gateway reads of a request's headers. */
export type HeaderReader = Pick<Headers, "get">;

/**
 * The request's headers as the server parsed them when it came over HTTP (Node's lower-case
 * record: no web `Headers` is built for a request the gateway only forwards), else the Request's.
 */
export function requestHeaders(
  request: Request,
  incoming: IncomingMessage | undefined,
): { reader: HeaderReader; all: Headers | IncomingHttpHeaders } {
  const raw = incoming?.headers;
  if (!raw) return { reader: request.headers, all: request.headers };
  return {
    reader: {
      get(name: string): string | null {
        const value = raw[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(", ") : value;
      },
    },
    all: raw,
  };
}

/**
 * A streamed body went over the limit: the stream errors with this and the gateway answers 413.
 * A problem itself, so a service that was reading the body (in process) answers it as the 413 it
 * is instead of logging an unhandled error; the gateway logs it once, at info.
 */
export class BodyTooLargeError extends ProblemError {
  constructor(limit: number) {
    super("payload-too-large", { detail: `The body exceeds ${limit} bytes` });
    this.name = "BodyTooLargeError";
  }
}

/**
 * Counts bytes as they stream and errors the stream once over `limit`, so a chunked body (no
 * Content-Length to check up front) cannot exceed it either.
 */
export function limitStream(
  body: ReadableStream<Uint8Array>,
  limit: number,
): { stream: ReadableStream<Uint8Array>; overLimit(): boolean } {
  let seen = 0;
  let over = false;
  const stream = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) {
          over = true;
          controller.error(new BodyTooLargeError(limit));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return { stream, overLimit: () => over };
}

/**
 * Bodies that declare at most this many bytes are read whole from the connection before they are
 * forwarded: no web stream (nor web Request) is built for them, and a service over HTTP receives
 * headers and body in one write. Larger ones, and those of unknown length, stream.
 */
export const BUFFERED_REQUEST_BYTES = 64 * 1024;

/** The request declared a length and the connection ended before it was all there. */
export class IncompleteBodyError extends Error {
  constructor() {
    super("the connection closed before the declared body was received");
    this.name = "IncompleteBodyError";
  }
}

/**
 * The body of a request that came over HTTP with a declared length of at most
 * BUFFERED_REQUEST_BYTES, read whole from the connection; undefined when the request has no body,
 * came another way, or has to stream (larger, or of unknown length).
 */
export async function readSmallBody(
  method: string,
  headers: Pick<Headers, "get">,
  incoming: IncomingMessage | undefined,
): Promise<Uint8Array | undefined> {
  if (!incoming || method === "GET" || method === "HEAD") return undefined;
  const declared = headers.get("content-length");
  if (declared === null || headers.get("transfer-encoding") !== null) return undefined;
  const length = Number(declared);
  if (!Number.isSafeInteger(length) || length > BUFFERED_REQUEST_BYTES) return undefined;
  // Every declared byte already in the connection's buffer (a small body mostly comes with its
  // headers; the parser gives the message no byte past its length): taken from there at once,
  // without waiting for the stream's events.
  if (length > 0 && incoming.readableLength === length && !incoming.readableFlowing) {
    const whole = incoming.read() as Buffer | null;
    if (whole?.length === length) {
      // Flowing from here on, so the request ends (and is done with) once the parser has its end.
      incoming.resume();
      return whole;
    }
    if (whole) incoming.unshift(whole);
  }
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: Error) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => finish();
    const onError = () => finish(new IncompleteBodyError());
    const onClose = () => {
      if (!incoming.readableEnded) finish(new IncompleteBodyError());
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}

/**
 * The request as the service receives it; the body streams through without being buffered (but
 * for a small one already read, `bytes`), its bytes counted against `maxBodyBytes`. No web
 * `Request` is built: a service over HTTP gets it as it is (`send`), one in process through
 * `toRequest`.
 */
export function forwardRequest(
  request: Request,
  url: URL,
  headers: Record<string, string>,
  maxBodyBytes = Number.POSITIVE_INFINITY,
  bytes?: Uint8Array,
): { request: OutgoingRequest; overLimit(): boolean } {
  const method = request.method;
  if (bytes) {
    return {
      request: { method, path: url.pathname + url.search, headers, body: bytes, signal: request.signal },
      overLimit: () => false,
    };
  }
  // Checked in this order: reading `body` of a GET makes the server build a whole web Request.
  const body = method !== "GET" && method !== "HEAD" ? request.body : null;
  // A declared length was checked before; only a body of unknown length needs counting.
  const limited =
    body && headers["content-length"] === undefined && Number.isFinite(maxBodyBytes)
      ? limitStream(body, maxBodyBytes)
      : undefined;
  return {
    request: {
      method,
      path: url.pathname + url.search,
      headers,
      body: limited?.stream ?? body,
      signal: request.signal,
    },
    overLimit: () => limited?.overLimit() ?? false,
  };
}

/** A forwarded request as a web `Request`, for a service answering in process. */
export function toRequest(origin: string, outgoing: OutgoingRequest): Request {
  return new Request(origin + outgoing.path, {
    method: outgoing.method,
    headers: outgoing.headers,
    ...(outgoing.body instanceof Uint8Array
      ? { body: outgoing.body }
      : outgoing.body
        ? { body: outgoing.body, duplex: "half" }
        : {}),
    redirect: "manual",
    ...(outgoing.signal ? { signal: outgoing.signal } : {}),
  } as RequestInit);
}
