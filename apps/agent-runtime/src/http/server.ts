import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { answerClientError, holdIdleConnections, refuseWithoutHost, unusableRequest } from "@agentplane/service-kit";
import { getRequestListener } from "@hono/node-server";

/**
 * The runtime's HTTP server: what `serve` of @hono/node-server builds, but answering every request
 * it refuses itself with a problem+json, as the platform's services do (a request line or headers
 * the parser refuses, an HTTP/1.1 request without Host, a Host that is no host). An upgrade
 * request is served as a plain request (the runtime has no WebSocket endpoint), so the Host check
 * and the routes still answer it. Idle keep-alive connections are held as the platform's are
 * (`holdIdleConnections`): longer than a load balancer in front holds its own.
 */
export function createRuntimeServer(
  // biome-ignore lint/suspicious/noExplicitAny: the node server passes its bindings ({ incoming, outgoing }) as env
  fetch: (request: Request, env?: any) => Response | Promise<Response>,
  hostname: string,
  keepAliveTimeoutMs?: number,
): Server {
  const listener = getRequestListener(fetch, { hostname, errorHandler: unusableRequest });
  const server = createServer({ requireHostHeader: false }, (req: IncomingMessage, res: ServerResponse) => {
    if (refuseWithoutHost(req, res)) return;
    void listener(req, res);
  });
  server.on("clientError", answerClientError);
  holdIdleConnections(server, keepAliveTimeoutMs);
  return server;
}
