import http2, { type ClientHttp2Session, type OutgoingHttpHeaders } from "node:http2";
import { CSRF_HEADER, INTERNAL_IDENTITY_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";
import { injectTraceparent, startChildSpan } from "@agentplane/telemetry";
import { responseOf } from "./h2-body.ts";
import { DELEGATION_HEADER, REQUEST_SIGNATURE_HEADER } from "./protocol.ts";
import type { SignedRequest } from "./request-signer.ts";

/**
 * Headers never passed down a tunnel: the relay authenticates to its API server itself, and is
 * not trusted with any credential of the caller's (a browser session's CSRF token included).
 */
const DROPPED = new Set([
  ...HOP_BY_HOP_HEADERS,
  "host",
  "authorization",
  "cookie",
  CSRF_HEADER,
  "content-length",
  "x-amz-security-token",
  INTERNAL_IDENTITY_HEADER,
  REQUEST_SIGNATURE_HEADER,
  DELEGATION_HEADER,
]);

export function disconnected(clusterId: string): ProblemError {
  return new ProblemError("cluster-disconnected", {
    detail: `The relay of cluster ${clusterId} is not connected`,
    headers: { "retry-after": "5" },
  });
}

/**
 * A request the relay never took up: reset with REFUSED_STREAM (RFC 9113 §8.7: not processed at
 * all), beyond the last stream of a GOAWAY, or never sent because its session was closing. Safe
 * to send again, down the tunnel that replaced this one; where there is none, a 503.
 */
export class TunnelStreamRefused extends ProblemError {
  constructor(clusterId: string, cause: string) {
    super("cluster-disconnected", {
      detail: `The relay of cluster ${clusterId} did not take up the request (${cause}): its tunnel is closing`,
      headers: { "retry-after": "1" },
    });
  }
}

/** Errors of a stream that never reached the relay: its session was closed or destroyed first. */
const UNSENT = new Set(["ERR_HTTP2_GOAWAY_SESSION", "ERR_HTTP2_INVALID_SESSION", "ERR_HTTP2_STREAM_CANCEL"]);

/** What a stream's early end is: refused (send it again), an error of the tunnel (502) or a cut (503). */
function earlyEnd(clusterId: string, stream: http2.ClientHttp2Stream, err: Error | undefined): ProblemError {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM)
    return new TunnelStreamRefused(clusterId, "REFUSED_STREAM");
  if (typeof code === "string" && UNSENT.has(code)) return new TunnelStreamRefused(clusterId, code);
  if (!err) return disconnected(clusterId);
  return new ProblemError("bad-gateway", {
    detail: `The tunnel to the relay of cluster ${clusterId} failed before the answer: ${
      typeof code === "string" ? `${code}: ` : ""
    }${err.message}`.slice(0, 1000),
  });
}

export function tunnelTimedOut(clusterId: string, timeoutMs: number): ProblemError {
  return new ProblemError("gateway-timeout", {
    detail: `The Kubernetes API server of cluster ${clusterId} did not answer within ${timeoutMs} ms`,
  });
}

/**
 * One signed request on a tunnel's HTTP/2 session: the caller's headers without credentials and
 * hop-by-hop ones, the body whole; resolves with the answer once its head arrives (the body
 * streams), rejects with `cluster-disconnected` when the stream closes before that (a
 * `TunnelStreamRefused` when the relay never took it up), `bad-gateway` when it errs. An abort of
 * `signal` resets the stream. With `timeoutMs`, the whole exchange is bounded: no head by then is
 * a 504 problem, a body still arriving then is cut (the stream reset, the caller's body errors).
 * With `headTimeoutMs` instead (a watch), only the head is: the body may last.
 */
export async function requestOnSession(args: {
  session: ClientHttp2Session;
  clusterId: string;
  signed: SignedRequest;
  method: string;
  path: string;
  headers?: Headers | undefined;
  body?: Uint8Array | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  headTimeoutMs?: number | undefined;
  /** Called once the stream has closed, however it ended. */
  onClose?: () => void;
  onEarlyClose?: (rstCode: number) => void;
}): Promise<Response> {
  const { session, clusterId, signal } = args;
  const headers: OutgoingHttpHeaders = {
    ":method": args.method.toUpperCase(),
    ":path": args.path,
    [REQUEST_SIGNATURE_HEADER]: args.signed.jwt,
    [DELEGATION_HEADER]: args.signed.delegation,
  };
  args.headers?.forEach((value, key) => {
    if (!DROPPED.has(key) && !key.startsWith("x-agentplane-") && !key.startsWith("x-forwarded-")) headers[key] = value;
  });
  // The hop through the relay is a span of its own; the relay passes its traceparent on to the
  // API server, so the request stays one trace from the gateway to the cluster.
  const method = args.method.toUpperCase();
  const span = startChildSpan(`tunnel ${method}`, {
    "http.request.method": method,
    "agentplane.cluster.id": clusterId,
  });
  if (span) injectTraceparent(headers as Record<string, string>, span);
  const hasBody = args.body !== undefined && args.body.length > 0;
  const stream = session.request(headers, { endStream: !hasBody });
  if (hasBody) stream.end(args.body);
  const cancel = () => stream.close(http2.constants.NGHTTP2_CANCEL);
  signal?.addEventListener("abort", cancel, { once: true });
  let answered = false;
  let timedOut = false;
  const limitMs = args.timeoutMs ?? args.headTimeoutMs;
  const deadline = limitMs
    ? setTimeout(() => {
        timedOut = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }, limitMs)
    : undefined;
  stream.once("close", () => {
    args.onClose?.();
    signal?.removeEventListener("abort", cancel);
    clearTimeout(deadline);
    if (!span) return;
    if (!answered) span.setStatus({ code: 2 });
    span.end();
  });
  const ended = () => (timedOut ? tunnelTimedOut(clusterId, limitMs ?? 0) : disconnected(clusterId));
  return new Promise<Response>((resolve, reject) => {
    // The body's listeners are attached in the same turn as the head arrives: an empty answer's
    // end can follow it at once, and would be missed a turn later (a body that never ends).
    stream.once("response", (head) => {
      answered = true;
      if (!args.timeoutMs) clearTimeout(deadline);
      span?.setAttribute("http.response.status_code", Number(head[":status"] ?? 0));
      resolve(responseOf(stream, head, args.method, ended));
    });
    // Never the stream's own error: an error thrown where a problem is due would be a 500.
    stream.once("error", (err) => {
      if (!answered) reject(timedOut ? ended() : earlyEnd(clusterId, stream, err));
    });
    stream.once("close", () => {
      // Every stream closes; only one closed before its response is an error (made only then).
      if (answered) return;
      args.onEarlyClose?.(stream.rstCode ?? 0);
      reject(timedOut ? ended() : earlyEnd(clusterId, stream, undefined));
    });
  });
}
