import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { ProblemError } from "@agentplane/problem-details";
import { getRequestListener, type ServerType } from "@hono/node-server";
import { answerClientError, refuseWithoutHost, unusableRequest } from "./http-refusals.ts";
import type { Logger } from "./logger.ts";
import { serveWithResponse } from "./served-response.ts";
import { guardSocket, rejectUpgrade } from "./upgrade.ts";

/**
 * How long an idle keep-alive connection is held open (Node's own default is 5 s). Load balancers
 * and ingress controllers keep their connections to a backend for longer (ingress-nginx and AWS
 * load balancers 60 s) and send the next request on one the backend may be closing: a POST lost
 * that way is answered 502 by the balancer, and a model call or an exec is not retried. Held
 * longer than theirs, the connection is always closed by the balancer first.
 */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * Holds idle keep-alive connections `ms` (the `Keep-Alive: timeout=…` answered says so). The
 * headers' deadline (`headersTimeout`, 60 s) stays above it, the order Node's defaults keep.
 */
export function holdIdleConnections(server: Server, ms: number = DEFAULT_KEEP_ALIVE_TIMEOUT_MS): void {
  server.keepAliveTimeout = ms;
  if (server.headersTimeout <= ms) server.headersTimeout = ms + 1_000;
}

export interface RunningServer {
  url: string;
  port: number;
  server: ServerType;
  close(): Promise<void>;
}

/**
 * Serves a fetch handler on a port (0 picks one) and resolves once listening; a failure to listen
 * (`EADDRINUSE`, `EACCES`) rejects with the server's error. Every socket handed
 * to `'upgrade'` gets an error listener first (a client's reset ends that client's connection, not
 * the process); an upgrade nobody else listens for is answered 404. `close` stops accepting, ends
 * idle and in-flight HTTP connections, and gives upgraded connections (WebSockets, tunnels) a
 * grace period to be closed by their service before it cuts them, so a connected client can never
 * hold a shutdown open.
 */
export function serveFetch(
  // biome-ignore lint/suspicious/noExplicitAny: the node server passes its bindings ({ incoming, outgoing }) as env
  fetch: (request: Request, env?: any) => Response | Promise<Response>,
  options: { port: number; hostname?: string; upgradeGraceMs?: number; keepAliveTimeoutMs?: number },
): Promise<RunningServer> {
  const upgraded = new Set<Duplex>();
  const graceMs = options.upgradeGraceMs ?? 1_000;
  return new Promise((resolve, reject) => {
    const hostname = options.hostname ?? "0.0.0.0";
    // What `serve` of @hono/node-server builds, with an error handler (`serve` takes none), so that
    // a request it cannot turn into a Request (an invalid Host) is answered with a problem; an
    // HTTP/1.1 request without a Host is refused here, where Node's own check answers a bare 400.
    const listener = getRequestListener(fetch, { hostname, errorHandler: unusableRequest });
    const server = createServer({ requireHostHeader: false }, (req, res) => {
      if (refuseWithoutHost(req, res)) return;
      void serveWithResponse(res, () => listener(req, res));
    });
    holdIdleConnections(server, options.keepAliveTimeoutMs);
    server.listen(options.port, hostname, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "127.0.0.1";
      resolve({
        url: `http://${host}:${port}`,
        port,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
            if (upgraded.size) {
              setTimeout(() => {
                for (const socket of upgraded) socket.destroy();
              }, graceMs).unref();
            }
          }),
      });
    });
    server.once("error", reject);
    server.on("clientError", answerClientError);
    server.on("upgrade", (_req, socket: Duplex) => {
      guardSocket(socket);
      upgraded.add(socket);
      socket.once("close", () => upgraded.delete(socket));
      if (server.listenerCount("upgrade") === 1) {
        rejectUpgrade(socket, new ProblemError("not-found", { detail: "This service has no WebSocket endpoints" }));
      }
    });
  });
}

/**
 * Runs `cleanup` once on SIGINT/SIGTERM, then exits; exit 1 if it has not finished in 10 s. The
 * deadline's timer also holds the process open meanwhile: a cleanup step that waits on something
 * holding no reference (an unreferenced worker thread, a closed server) would otherwise let the
 * process end quietly halfway through, before its database is closed.
 */
export function onShutdown(cleanup: () => Promise<void>, logger?: Logger): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger?.info({ signal }, "shutting down");
    setTimeout(() => process.exit(1), 10_000);
    cleanup()
      .catch((err) => logger?.error({ err }, "shutdown failed"))
      .finally(() => process.exit(0));
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}
