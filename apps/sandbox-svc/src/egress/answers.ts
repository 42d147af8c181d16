import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { ProblemError } from "@agentplane/problem-details";
import { HOP_BY_HOP_HEADERS } from "@agentplane/service-kit";

function problemBody(error: ProblemError): string {
  return JSON.stringify(error.toBody());
}

/** The proxy's answer in place of `200 Connection Established`, then the end of the tunnel. */
export function refuseTunnel(client: Duplex, error: ProblemError): void {
  const body = problemBody(error);
  const extra = Object.entries(error.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  client.end(
    `HTTP/1.1 ${error.status} ${error.title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`,
  );
}

/** A problem+json answer to a plain request (the socket is cut when an answer had begun). */
export function refuseRequest(res: ServerResponse, error: ProblemError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(error.status, { ...error.headers, "content-type": "application/problem+json", connection: "close" });
  res.end(problemBody(error));
}

/** Headers passed on either way: without hop-by-hop ones and those `Connection` names. */
export function forwardedHeaders(headers: IncomingMessage["headers"]): Record<string, string | string[]> {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const drop = new Set([...HOP_BY_HOP_HEADERS, "proxy-connection", ...named]);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !drop.has(name)) out[name] = value;
  }
  return out;
}
