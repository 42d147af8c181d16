import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { PROBLEM_CONTENT_TYPE, ProblemError, problemResponse } from "@agentplane/problem-details";
import { rejectUpgrade } from "@agentplane/service-kit";
import { getRequestListener, RequestError } from "@hono/node-server";

/** The answer to a request the node server could not turn into a Request (a Host that is no host). */
function unusableRequest(err: unknown): Response {
  if (err instanceof RequestError) {
    return problemResponse(new ProblemError("bad-request", { detail: `The request is not valid: ${err.message}` }));
  }
  return problemResponse(new ProblemError("internal-error"));
}

function parserProblem(code: string | undefined): ProblemError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new ProblemError("headers-too-large", {
        detail: "The request line or headers exceed the size this server accepts",
      });
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new ProblemError("request-timeout", { detail: "The request did not arrive in time" });
    default:
      return new ProblemError("bad-request", { detail: "The request is not valid HTTP" });
  }
}

/**
 * A request Node's parser refused before any route saw it (headers over the size limit, a request
 * line that is not HTTP, a chunk size that is not hex, a length given twice) is answered with a
 * problem like every other refusal, where Node writes a bare status line. A socket with an answer
 * already under way, or gone, is only closed.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  rejectUpgrade(socket, parserProblem(err.code));
}

function noHost(res: ServerResponse): void {
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
}

/**
 * The runtime's HTTP server: what `serve` of @hono/node-server builds, but answering every request
 * it refuses itself with a problem+json. An upgrade request is served as a plain request (the
 * runtime has no WebSocket endpoint), so the Host check and the routes still answer it.
 */
export function createRuntimeServer(
  // biome-ignore lint/suspicious/noExplicitAny: the node server passes its bindings ({ incoming, outgoing }) as env
  fetch: (request: Request, env?: any) => Response | Promise<Response>,
  hostname: string,
): Server {
  const listener = getRequestListener(fetch, { hostname, errorHandler: unusableRequest });
  const server = createServer({ requireHostHeader: false }, (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.host === undefined && req.httpVersion === "1.1") return noHost(res);
    void listener(req, res);
  });
  server.on("clientError", answerClientError);
  return server;
}
