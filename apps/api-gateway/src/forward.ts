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

/** The request as the service receives it; the body streams through without being buffered. */
export function forwardRequest(request: Request, headers: Headers): Request {
  const hasBody = request.body !== null && request.method !== "GET" && request.method !== "HEAD";
  return new Request(request.url, {
    method: request.method,
    headers,
    ...(hasBody ? { body: request.body, duplex: "half" } : {}),
    redirect: "manual",
    signal: request.signal,
  } as RequestInit);
}
