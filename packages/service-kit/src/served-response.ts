import { AsyncLocalStorage } from "node:async_hooks";
import type { ServerResponse } from "node:http";

/**
 * The Node response a request served by `serveFetch` is answered on, for the code that runs while
 * it is handled. An answer streamed from an upstream that breaks off partway is ended by
 * destroying that response: the client sees the answer cut (no final chunk), and the node server
 * (which, for a body stream that errors, prints the error with its stack to stderr and writes its
 * message to the client) never sees an error. The service logs the cut its own way.
 */
const served = new AsyncLocalStorage<ServerResponse>();

export function serveWithResponse<T>(res: ServerResponse, handle: () => T): T {
  return served.run(res, handle);
}

/** The response of the request being handled, when `serveFetch` serves it. */
export function servedResponse(): ServerResponse | undefined {
  return served.getStore();
}
