import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Principal } from "@agentplane/contracts";

/** A request for an exposed sandbox port, as the gateway resolved it from the Host header. */
export interface IngressTarget {
  slug: string;
  port?: number;
  principal?: Principal;
  /** The gateway's request id, for the problems the sandbox service answers. */
  requestId?: string;
}

/**
 * Host-based ingress to sandbox ports (`<slug>.<ingress host>`, `<port>-<slug>.<ingress host>`).
 * The gateway authenticates an optional bearer token; the sandbox service decides whether the
 * port needs one and proxies to it.
 */
export interface IngressRouter {
  parse(host: string): { slug: string; port?: number } | undefined;
  fetch(request: Request, target: IngressTarget): Promise<Response>;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: IngressTarget): void;
}
