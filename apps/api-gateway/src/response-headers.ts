import type { ResponseHeaders } from "@agentplane/service-kit";

/**
 * An API answer is the caller's own data: kept by no cache (a shared proxy's, the browser's disk,
 * its back/forward history after signing out) unless the service chose a policy of its own (the
 * JWKS). Never sniffed into another type either: a tenant's string in a JSON answer stays
 * text.
 */
export const API_CACHE_CONTROL = "no-store";

/**
 * The Node server's lightweight Response (@hono/node-server) keeps `[status, body, headers]` under
 * a symbol named "cache" until something reads it as a web Response; while its headers are still
 * the record a service gave, the server writes that record as it is. Reading or changing them
 * through `response.headers` builds undici's Headers (validating every header) and makes the
 * server turn them back into a record. These helpers work on the record instead, and fall back to
 * `headers` for any other Response.
 * Pinned and watched: docs/decisions/0016-node-server-response-internals.md (canary test:
 * test/node-server-internals.test.ts).
 */
let cacheKey: symbol | undefined;

const DEFAULT_CONTENT_TYPE = "text/plain; charset=UTF-8";

function cacheOf(response: Response): [number, unknown, unknown] | undefined {
  cacheKey ??= Object.getOwnPropertySymbols(response).find((s) => s.description === "cache");
  if (!cacheKey) return undefined;
  const cache = (response as unknown as Record<symbol, unknown>)[cacheKey];
  if (!Array.isArray(cache) || cache.length !== 3 || typeof cache[0] !== "number") return undefined;
  const headers = cache[2];
  if (headers === undefined || headers === null) return cache as [number, unknown, unknown];
  if (typeof headers !== "object" || Array.isArray(headers) || headers instanceof Headers) return undefined;
  return cache as [number, unknown, unknown];
}

/**
 * Lets `adjust` change the answer's headers as a record of lower-case names (as `send` offers
 * them over HTTP). True when done on the lightweight Response's own record; false when the
 * Response is of another kind and the caller must go through `headers`. Once changed this way, the
 * Response must be handed to the server as it is: reading it as a web Response (its body, a clone)
 * would build one from the headers it was created with.
 */
export function adjustResponseHeaders(response: Response, adjust: (headers: ResponseHeaders) => void): boolean {
  const cache = cacheOf(response);
  if (!cache) return false;
  const given = cache[2] as ResponseHeaders | undefined | null;
  // No headers: the server would send its default content type with a body.
  const record: ResponseHeaders = given ?? (cache[1] === null ? {} : { "content-type": DEFAULT_CONTENT_TYPE });
  // A copy: the record given may be shared by the service's other answers.
  const copy: ResponseHeaders = {};
  for (const key in record) {
    if (Object.hasOwn(record, key)) copy[key.toLowerCase()] = record[key] as string | string[];
  }
  adjust(copy);
  cache[2] = copy;
  return true;
}

/** One header of the answer, read without building its Headers where the record can be read. */
export function responseHeader(response: Response, name: string): string | undefined {
  const cache = cacheOf(response);
  if (!cache) return response.headers.get(name) ?? undefined;
  const record = cache[2] as ResponseHeaders | undefined | null;
  const wanted = name.toLowerCase();
  if (!record) return wanted === "content-type" && cache[1] !== null ? DEFAULT_CONTENT_TYPE : undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key) || key.toLowerCase() !== wanted) continue;
    const value = record[key];
    return Array.isArray(value) ? value.join(", ") : value;
  }
  return undefined;
}
