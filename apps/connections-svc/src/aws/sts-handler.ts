import { Readable } from "node:stream";
import type { Logger } from "@agentplane/service-kit";
import type { SafeFetcher } from "@agentplane/service-kit/outbound";
import { type HttpHandler, type HttpRequest, HttpResponse } from "@smithy/protocol-http";
import { type BodyBounds, boundedBodyStream } from "./bounded-body.ts";

/**
 * The STS client's request handler for the connection test: the request goes out through the same
 * outbound policy and timeout as proxied calls (`sendToAws`), instead of the SDK's own HTTP stack,
 * which would reach any endpoint override. A failure to reach the endpoint is thrown as the
 * fetcher's FetchRefusedError, so the test can tell "STS never answered" from "STS refused". The
 * answer's body is bounded in time as a proxied one is (`BodyTimeoutError` past a bound).
 */
export function outboundStsHandler(
  outbound: SafeFetcher,
  timeoutMs: number,
  body: { bounds: BodyBounds; logger: Logger },
): HttpHandler {
  return {
    async handle(request: HttpRequest, options?: { abortSignal?: AbortSignal | { aborted: boolean } }) {
      const url = new URL(`${request.protocol}//placeholder`);
      url.hostname = request.hostname;
      if (request.port) url.port = String(request.port);
      url.pathname = request.path;
      for (const [key, value] of Object.entries(request.query ?? {})) {
        for (const v of Array.isArray(value) ? value : [value])
          if (v !== null && v !== undefined) url.searchParams.append(key, v);
      }
      const sent =
        typeof request.body === "string"
          ? new TextEncoder().encode(request.body)
          : request.body instanceof Uint8Array
            ? request.body
            : undefined;
      const signal = options?.abortSignal instanceof AbortSignal ? options.abortSignal : undefined;
      const answer = await outbound.send(url, {
        method: request.method,
        headers: request.headers,
        body: sent,
        signal,
        headersTimeoutMs: timeoutMs,
      });
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(answer.headers)) {
        if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(", ") : value;
      }
      const bounded = boundedBodyStream(answer.body, body.bounds, { logger: body.logger, host: url.host });
      return {
        response: new HttpResponse({
          statusCode: answer.statusCode,
          headers,
          body: Readable.fromWeb(bounded as never),
        }),
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  };
}
