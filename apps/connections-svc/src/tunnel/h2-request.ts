import http2, { type ClientHttp2Session, type OutgoingHttpHeaders } from "node:http2";
import { INTERNAL_IDENTITY_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";
import { responseOf } from "./h2-body.ts";
import { DELEGATION_HEADER, REQUEST_SIGNATURE_HEADER } from "./protocol.ts";
import type { SignedRequest } from "./request-signer.ts";

/** Headers never passed down a tunnel (the relay authenticates to its API server itself). */
const DROPPED = new Set([
  ...HOP_BY_HOP_HEADERS,
  "host",
  "authorization",
  "cookie",
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
 * One signed request on a tunnel's HTTP/2 session: the caller's headers without credentials and
 * hop-by-hop ones, the body whole; resolves with the answer once its head arrives (the body
 * streams), rejects with `cluster-disconnected` when the stream closes before that. An abort of
 * `signal` resets the stream.
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
  const hasBody = args.body !== undefined && args.body.length > 0;
  const stream = session.request(headers, { endStream: !hasBody });
  if (hasBody) stream.end(args.body);
  const cancel = () => stream.close(http2.constants.NGHTTP2_CANCEL);
  signal?.addEventListener("abort", cancel, { once: true });
  stream.once("close", () => signal?.removeEventListener("abort", cancel));
  const head = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
    let answered = false;
    stream.once("response", (h) => {
      answered = true;
      resolve(h);
    });
    stream.once("error", reject);
    stream.once("close", () => {
      // Every stream closes; only one closed before its response is an error (made only then).
      if (answered) return;
      args.onEarlyClose?.(stream.rstCode ?? 0);
      reject(disconnected(clusterId));
    });
  });
  return responseOf(stream, head, args.method, () => disconnected(clusterId));
}
