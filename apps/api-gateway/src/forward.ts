import { INTERNAL_IDENTITY_HEADER, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";

/** Hop-by-hop headers and credentials that must not travel past the gateway. */
const DROPPED = new Set([...HOP_BY_HOP_HEADERS, "authorization", INTERNAL_IDENTITY_HEADER]);

export function forwardHeaders(incoming: Headers, identity: string | undefined, requestId: string): Headers {
  const headers = new Headers();
  incoming.forEach((value, key) => {
    if (!DROPPED.has(key)) headers.set(key, value);
  });
  if (identity) headers.set(INTERNAL_IDENTITY_HEADER, identity);
  headers.set(REQUEST_ID_HEADER, requestId);
  return headers;
}

/** A streamed body went over the limit: the stream errors with this and the gateway answers 413. */
export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`the body exceeds ${limit} bytes`);
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
 * The request as the service receives it; the body streams through without being buffered, its
 * bytes counted against `maxBodyBytes`. The address the caller reached the gateway at travels as
 * `x-forwarded-host`/`-proto` (whatever the caller sent in those is replaced), so a service can
 * build links to the gateway.
 */
export function forwardRequest(
  request: Request,
  headers: Headers,
  maxBodyBytes = Number.POSITIVE_INFINITY,
): { request: Request; overLimit(): boolean } {
  const url = new URL(request.url);
  headers.set("x-forwarded-host", url.host);
  headers.set("x-forwarded-proto", url.protocol.slice(0, -1));
  const hasBody = request.body !== null && request.method !== "GET" && request.method !== "HEAD";
  // A declared length was checked before; only a body of unknown length needs counting.
  const limited =
    hasBody && request.body && !request.headers.has("content-length") && Number.isFinite(maxBodyBytes)
      ? limitStream(request.body, maxBodyBytes)
      : undefined;
  const forwarded = new Request(request.url, {
    method: request.method,
    headers,
    ...(hasBody ? { body: limited?.stream ?? request.body, duplex: "half" } : {}),
    redirect: "manual",
    signal: request.signal,
  } as RequestInit);
  return { request: forwarded, overLimit: () => limited?.overLimit() ?? false };
}
