import { NULL_BODY_STATUSES, webStreamOf } from "@agentplane/service-kit";
import { Agent, type Dispatcher, request } from "undici";

/** Keep-alive connections to AWS endpoints, shared by every connection's proxied calls. */
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128 });
/** Answers declaring at most this many bytes are read whole (one write back); others stream. */
const BUFFERED_BYTES = 64 * 1024;
const HOP_BY_HOP = new Set(["transfer-encoding", "connection", "keep-alive"]);

/**
 * Sends a re-signed call to AWS with `undici.request` (no fetch algorithm bookkeeping, no
 * decoding: the body and its `content-encoding` pass through as AWS sent them; redirects are not
 * followed) and answers with AWS's status, headers and body.
 */
export async function sendToAws(
  target: URL,
  init: { method: string; headers: Headers; body: Uint8Array | undefined; signal: AbortSignal },
): Promise<Response> {
  const headers: Record<string, string> = {};
  init.headers.forEach((value, key) => {
    headers[key] = value;
  });
  const answer = await request(target, {
    method: init.method as Dispatcher.HttpMethod,
    headers,
    dispatcher: agent,
    signal: init.signal,
    ...(init.body?.length ? { body: init.body } : {}),
  });
  const out = new Headers();
  for (const [key, value] of Object.entries(answer.headers)) {
    if (value === undefined || HOP_BY_HOP.has(key)) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(key, v);
  }
  const status = answer.statusCode;
  if (NULL_BODY_STATUSES.has(status) || init.method === "HEAD") {
    answer.body.resume();
    return new Response(null, { status, headers: out });
  }
  const declared = answer.headers["content-length"];
  if (typeof declared === "string" && Number(declared) <= BUFFERED_BYTES) {
    return new Response(new Uint8Array(await answer.body.arrayBuffer()), { status, headers: out });
  }
  return new Response(webStreamOf(answer.body), { status, headers: out });
}
