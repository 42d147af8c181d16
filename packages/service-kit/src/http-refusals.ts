import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { PROBLEM_CONTENT_TYPE, ProblemError, problemResponse } from "@agentplane/problem-details";
import { RequestError } from "@hono/node-server";
import { rejectUpgrade } from "./upgrade.ts";

// What a node:http server built for @hono/node-server answers itself, as every other refusal is
// answered: a problem+json. `serveFetch` and the agent runtime's server both use these.

/**
 * An HTTP/1.1 request without a Host, refused here (400 problem, connection closed) where Node's
 * own check answers a bare 400. True when it was refused.
 */
export function refuseWithoutHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.headers.host !== undefined || req.httpVersion !== "1.1") return false;
  const body = JSON.stringify(
    new ProblemError("bad-request", { detail: "An HTTP/1.1 request names its Host" }).toBody(),
  );
  res
    .writeHead(400, {
      "content-type": PROBLEM_CONTENT_TYPE,
      "content-length": Buffer.byteLength(body),
      connection: "close",
    })
    .end(body);
  return true;
}

/**
 * The answer to a request the node server could not turn into a Request (its Host missing or not a
 * host, an absolute target that is no URL): a 400 problem. Anything else thrown on the way is a
 * 500 problem (504 for a timeout), as the server's own default answers, with a body.
 */
export function unusableRequest(err: unknown): Response {
  if (err instanceof RequestError) {
    return problemResponse(new ProblemError("bad-request", { detail: `The request is not valid: ${err.message}` }));
  }
  const timeout = err instanceof Error && err.name === "TimeoutError";
  return problemResponse(new ProblemError(timeout ? "gateway-timeout" : "internal-error"));
}

/**
 * A request Node's parser refused before any handler saw it (a request line or headers over the
 * size limit, malformed syntax, a request that took too long to arrive) is answered as every other
 * refusal is, with a problem, where Node would write a bare status line. A socket with an answer
 * already under way, or gone, is only closed.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  rejectUpgrade(socket, clientProblem(err.code));
}

function clientProblem(code: string | undefined): ProblemError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new ProblemError("headers-too-large", {
        detail: "The request line or headers exceed the size this server accepts",
      });
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new ProblemError("payload-too-large", { detail: "The chunk extensions exceed the size accepted" });
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ProblemError("request-timeout", { detail: "The request did not arrive in time" });
    default:
      return new ProblemError("bad-request", { detail: "The request is not valid HTTP" });
  }
}
