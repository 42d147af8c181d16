// A server on port 0 that answers the way a broken or hostile installation would; every request it
// saw is kept (its headers and body) for the test to look at.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

export interface HostileServer {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

export async function startHostileServer(
  answer: (req: IncomingMessage, res: ServerResponse, body: string) => void,
  host = "127.0.0.1",
): Promise<HostileServer> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `value` as JSON with `status`, as problem+json when it is an error. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.statusCode = status;
  res.setHeader("content-type", status >= 400 ? "application/problem+json" : "application/json");
  res.end(JSON.stringify(value));
}
