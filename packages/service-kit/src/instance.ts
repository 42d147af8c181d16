import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ServiceName } from "@agentplane/contracts";
import type { Readiness } from "./health.ts";

/** Takes over an HTTP upgrade (WebSocket) whose request already carries the internal identity header. */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * A built service, as the launcher and the gateway see it. The same object is served on its own
 * port (distributed) or called in process (all-in-one).
 */
export interface ServiceInstance {
  name: ServiceName;
  fetch: (request: Request) => Response | Promise<Response>;
  handleUpgrade?: UpgradeHandler;
  /** Readiness: its database and bus are reachable. */
  ready(): Promise<boolean>;
  /** Each dependency's state, as `GET /health/ready` reports it (when the service has checks). */
  readiness?(): Promise<Readiness>;
  /** Stops background work (consumers, timers); does not close shared database or bus. */
  close(): Promise<void>;
}
