import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Logger } from "./logger.ts";

export interface RunningServer {
  url: string;
  port: number;
  server: ReturnType<typeof serve>;
  close(): Promise<void>;
}

/** Serves a fetch handler on a port (0 picks one) and resolves once listening. */
export function serveFetch(
  // biome-ignore lint/suspicious/noExplicitAny: the node server passes its bindings ({ incoming, outgoing }) as env
  fetch: (request: Request, env?: any) => Response | Promise<Response>,
  options: { port: number; hostname?: string },
): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve(
      { fetch, port: options.port, hostname: options.hostname ?? "0.0.0.0" },
      (info: AddressInfo) => {
        const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "127.0.0.1";
        resolve({
          url: `http://${host}:${info.port}`,
          port: info.port,
          server,
          close: () =>
            new Promise<void>((done) => {
              const s = server as unknown as { closeAllConnections?: () => void; close: (cb: () => void) => void };
              s.close(() => done());
              s.closeAllConnections?.();
            }),
        });
      },
    );
  });
}

/** Runs `cleanup` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(cleanup: () => Promise<void>, logger?: Logger): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger?.info({ signal }, "shutting down");
    cleanup()
      .catch((err) => logger?.error({ err }, "shutdown failed"))
      .finally(() => process.exit(0));
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}
