import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { PROBLEM_CONTENT_TYPE, ProblemError } from "@agentplane/problem-details";
import { getRequestListener, type ServerType } from "@hono/node-server";
import { answerClientError, refuseWithoutHost, unusableRequest } from "./http-refusals.ts";
import type { Logger } from "./logger.ts";
import { serveWithResponse } from "./served-response.ts";
import { asksForWebSocket, guardSocket, rejectUpgrade } from "./upgrade.ts";

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

/** How a process shutdown drains a server (`SHUTDOWN_DELAY_MS`, `SHUTDOWN_DRAIN_MS`). */
export interface DrainTiming {
  /** How long it keeps serving, answering `GET /health/ready` 503, before it stops accepting. */
  delayMs: number;
  /** How long it then waits for requests in flight (and upgraded connections) before it cuts them. */
  drainMs: number;
}

export interface DrainResult {
  /** False when the drain limit passed and what was left was cut. */
  drained: boolean;
  /** Connections in use (a request in flight, an upgraded one) when it stopped accepting, and when it cut. */
  inFlight: number;
  cut: number;
}

export interface RunningServer {
  url: string;
  port: number;
  server: ServerType;
  /** Stops at once: in-flight requests are cut (tests, in-process closes, a failed start). */
  close(): Promise<void>;
  /**
   * The graceful stop of a process shutdown: reports not ready and answers `Connection: close`
   * while still serving for `delayMs`, then stops accepting, closes idle connections and waits up to
   * `drainMs` for what is in flight, then cuts what is left as `close` does.
   */
  drain(timing: DrainTiming): Promise<DrainResult>;
}

const HEALTH_READY = "/health/ready";

/** The answer to `GET /health/ready` of a server that is shutting down: a 503 problem, connection closed. */
function answerShuttingDown(res: ServerResponse): void {
  const body = JSON.stringify(
    new ProblemError("service-unavailable", { detail: "Shutting down", extensions: { shuttingDown: true } }).toBody(),
  );
  res
    .writeHead(503, {
      "content-type": PROBLEM_CONTENT_TYPE,
      "content-length": Buffer.byteLength(body),
      connection: "close",
    })
    .end(body);
}

/** The server's open connections (upgraded ones included). */
const openConnections = (server: Server) =>
  new Promise<number>((resolve) => server.getConnections((err, count) => resolve(err ? 0 : count)));

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * Serves a fetch handler on a port (0 picks one) and resolves once listening; a failure to listen
 * (`EADDRINUSE`, `EACCES`) rejects with the server's error. Every socket handed
 * to `'upgrade'` gets an error listener first (a client's reset ends that client's connection, not
 * the process); an upgrade nobody else listens for is answered 404. `close` stops accepting, ends
 * idle and in-flight HTTP connections, and gives upgraded connections (WebSockets, tunnels) a
 * grace period to be closed by their service before it cuts them, so a connected client can never
 * hold a shutdown open. `drain` is the graceful stop of a process shutdown.
 */
export function serveFetch(
  // biome-ignore lint/suspicious/noExplicitAny: the node server passes its bindings ({ incoming, outgoing }) as env
  fetch: (request: Request, env?: any) => Response | Promise<Response>,
  options: { port: number; hostname?: string; upgradeGraceMs?: number; keepAliveTimeoutMs?: number },
): Promise<RunningServer> {
  const upgraded = new Set<Duplex>();
  const graceMs = options.upgradeGraceMs ?? 1_000;
  let draining = false;
  return new Promise((resolve, reject) => {
    const hostname = options.hostname ?? "0.0.0.0";
    // What `serve` of @hono/node-server builds, with an error handler (`serve` takes none), so that
    // a request it cannot turn into a Request (an invalid Host) is answered with a problem; an
    // HTTP/1.1 request without a Host is refused here, where Node's own check answers a bare 400.
    const listener = getRequestListener(fetch, { hostname, errorHandler: unusableRequest });
    const server = createServer({ requireHostHeader: false, shouldUpgradeCallback: asksForWebSocket }, (req, res) => {
      if (refuseWithoutHost(req, res)) return;
      if (draining) {
        if (req.method === "GET" && req.url?.split("?")[0] === HEALTH_READY) return answerShuttingDown(res);
        // A client told to close opens its next connection elsewhere (the balancer no longer sends here).
        res.shouldKeepAlive = false;
      }
      // Nothing more per request: an answer begun before the drain leaves its connection idle,
      // and idle connections are closed while it drains.
      void serveWithResponse(res, () => listener(req, res));
    });
    holdIdleConnections(server, options.keepAliveTimeoutMs);
    server.listen(options.port, hostname, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "127.0.0.1";
      let closed: Promise<void> | undefined;
      // Once: a second `server.close` would call back at once, before the connections are gone.
      const stopAccepting = () => {
        closed ??= new Promise<void>((done) => server.close(() => done()));
        return closed;
      };
      const cut = (upgradeGraceMs: number) => {
        server.closeAllConnections();
        if (upgraded.size) {
          const destroy = () => {
            for (const socket of upgraded) socket.destroy();
          };
          if (upgradeGraceMs > 0) setTimeout(destroy, upgradeGraceMs).unref();
          else destroy();
        }
      };
      resolve({
        url: `http://${host}:${port}`,
        port,
        server,
        close: () => {
          const done = stopAccepting();
          cut(graceMs);
          return done;
        },
        drain: async ({ delayMs, drainMs }) => {
          draining = true;
          if (delayMs > 0) await sleep(delayMs);
          const done = stopAccepting();
          server.closeIdleConnections();
          // Every open connection is now busy: a request in flight or an upgraded one.
          const count = await openConnections(server);
          // A connection whose answer has ended is idle: closed within 50 ms, so the close is not
          // held by a client that would keep it open.
          const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
          let timer: NodeJS.Timeout | undefined;
          const drained = await Promise.race([
            done.then(() => true),
            new Promise<false>((resolve) => {
              timer = setTimeout(() => resolve(false), drainMs);
            }),
          ]);
          clearTimeout(timer);
          clearInterval(idleSweep);
          const left = drained ? 0 : await openConnections(server);
          if (!drained) {
            cut(0);
            await done;
          }
          return { drained, inFlight: count, cut: left };
        },
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

/** How long the cleanup after a drain (the service, its storage) may take before the process exits 1. */
export const SHUTDOWN_CLEANUP_MS = 10_000;

/** What a process shutdown drains before its cleanup, and for how long. */
export interface ShutdownDrain extends DrainTiming {
  servers: RunningServer[];
}

/**
 * Runs the shutdown once on SIGINT/SIGTERM, then exits: with `drain`, its servers drain first (each
 * reports not ready and keeps serving for `delayMs`, then waits up to `drainMs` for what is in
 * flight), then `cleanup` runs. It exits 1 if all of it has not finished in delay + drain + 10 s,
 * and at once on a second signal (Ctrl-C twice). The deadline's timer also holds the process open
 * meanwhile: a cleanup step that waits on something holding no reference (an unreferenced worker
 * thread, a closed server) would otherwise let the process end quietly halfway through, before its
 * database is closed.
 */
export function onShutdown(cleanup: () => Promise<void>, logger?: Logger, drain?: ShutdownDrain): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger?.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    const delayMs = drain?.delayMs ?? 0;
    const drainMs = drain?.drainMs ?? 0;
    logger?.info({ signal, ...(drain ? { delayMs, drainMs } : {}) }, "shutting down");
    setTimeout(
      () => {
        logger?.error({ signal }, "shutdown did not finish in time: exiting");
        process.exit(1);
      },
      delayMs + drainMs + SHUTDOWN_CLEANUP_MS,
    );
    (async () => {
      if (drain?.servers.length) {
        const results = await Promise.all(drain.servers.map((server) => server.drain({ delayMs, drainMs })));
        const cut = results.reduce((sum, r) => sum + r.cut, 0);
        if (cut) logger?.warn({ cut, drainMs }, "requests still in flight at the drain limit were cut");
      }
      await cleanup();
    })()
      .catch((err) => logger?.error({ err }, "shutdown failed"))
      .finally(() => process.exit(0));
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}
