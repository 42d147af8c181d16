import { ProblemError } from "@agentplane/problem-details";
import { type Logger, NULL_BODY_STATUSES, readAtMost } from "@agentplane/service-kit";
import { FetchRefusedError, type SafeFetcher } from "@agentplane/service-kit/outbound";
import { ANSWER_POLICY, refusedAnswerHeader } from "../answer-headers.ts";
import { type BodyBounds, BodyTimeoutError, boundedBodyStream } from "./bounded-body.ts";

/** Answers declaring at most this many bytes are read whole (one write back); others stream. */
const BUFFERED_BYTES = 64 * 1024;

/**
 * Sends a re-signed call to AWS through the outbound policy (the endpoint's addresses checked, a
 * refused one never connected to), with undici's `request` underneath (no decoding: the body and
 * its `content-encoding` pass through as AWS sent them; redirects are not followed), and answers
 * with AWS's status, headers and body. An endpoint that is refused, does not resolve, refuses the
 * connection or fails TLS is a 502 problem naming the cause; no answer within `timeoutMs` a 504.
 * The body is bounded by `body` (see `boundedBodyStream`): a small one not read whole in time is a
 * 504 too; a streamed one is cut short.
 */
export async function sendToAws(
  outbound: SafeFetcher,
  target: URL,
  init: {
    method: string;
    headers: Headers;
    body: Uint8Array | undefined;
    signal: AbortSignal;
    timeoutMs: number;
    bodyBounds: BodyBounds;
    logger: Logger;
  },
): Promise<Response> {
  const headers: Record<string, string> = {};
  init.headers.forEach((value, key) => {
    headers[key] = value;
  });
  let answer: Awaited<ReturnType<SafeFetcher["send"]>>;
  try {
    answer = await outbound.send(target, {
      method: init.method,
      headers,
      body: init.body,
      signal: init.signal,
      headersTimeoutMs: init.timeoutMs,
    });
  } catch (error) {
    throw awsUnreachable(error, target);
  }
  // Served from the platform's origin: what the answer may not do there is left out, and any page
  // in it renders sandboxed (an S3 object stored as text/html must not run script there).
  const out = new Headers(ANSWER_POLICY);
  for (const [key, value] of Object.entries(answer.headers)) {
    if (value === undefined || refusedAnswerHeader(key)) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(key, v);
  }
  const status = answer.statusCode;
  if (NULL_BODY_STATUSES.has(status) || init.method === "HEAD") {
    answer.body.resume();
    return new Response(null, { status, headers: out });
  }
  const body = boundedBodyStream(answer.body, init.bodyBounds, { logger: init.logger, host: target.host });
  const declared = answer.headers["content-length"];
  if (typeof declared === "string" && Number(declared) <= BUFFERED_BYTES) {
    try {
      // undici holds the body to its declared length: more is never read.
      const whole = await readAtMost(body, BUFFERED_BYTES, () => new Error("longer than its content-length"));
      return new Response(whole, { status, headers: out });
    } catch (error) {
      if (!(error instanceof BodyTimeoutError)) throw error;
      throw new ProblemError("gateway-timeout", {
        detail: `The AWS endpoint ${target.host} did not send its answer in time: ${error.message}`,
        extensions: { reason: "timeout" },
      });
    }
  }
  return new Response(body, { status, headers: out });
}

/** A failure to reach an AWS endpoint as the problem that names it (502, or 504 for a timeout). */
export function awsUnreachable(error: unknown, target: URL): unknown {
  // The fetcher turns every failure to reach the endpoint into a FetchRefusedError.
  if (!(error instanceof FetchRefusedError)) return error;
  const where = `The AWS endpoint ${target.host}`;
  if (error.reason === "timeout") {
    return new ProblemError("gateway-timeout", {
      detail: `${where} did not answer in time: ${error.message}`,
      extensions: { reason: error.reason },
    });
  }
  const detail =
    error.reason === "blocked-address"
      ? `${where} is refused by the outbound address policy (${error.message}); operators allow internal endpoints with CONNECTOR_ALLOWED_HOSTS`
      : `${where} could not be reached: ${error.message}`;
  return new ProblemError("bad-gateway", { detail, extensions: { reason: error.reason } });
}
