// What a client owes its caller when the server misbehaves: an answer that never comes ends at a
// deadline, one that never ends stops at a size, and a redirect never carries a request (its
// token, its body) to another origin. The API itself never redirects: an answer that does comes
// from something in front of the installation, or from a server that is not one.

/** No complete answer within the client's `timeoutMs` (its retries and reading the body included). */
export class RequestTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no complete answer within ${timeoutMs / 1000} s`);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** The answer's body grew past the client's `maxResponseBytes`; the rest was not read. */
export class ResponseTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`the answer is larger than ${limit} bytes, the most this client reads`);
    this.name = "ResponseTooLargeError";
    this.limit = limit;
  }
}

/** A redirect the client would not follow: to another origin, or of a request with a body. */
export class RedirectRefusedError extends Error {
  readonly status: number;
  readonly location: string;
  constructor(status: number, location: string, why: string) {
    super(`the server answered ${status} redirecting to ${location}, which was not followed: ${why}`);
    this.name = "RedirectRefusedError";
    this.status = status;
    this.location = location;
  }
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Fetch = (request: Request) => Promise<Response>;

/**
 * Sends `request` without letting fetch follow redirects: a redirect of a GET or HEAD within the
 * same origin is followed (five at most); any other is refused with RedirectRefusedError. fetch
 * itself drops `Authorization` on a cross-origin redirect, but would still send the request's
 * body (a 307 or 308 of a POST holding a credential) and take the other origin's answer as ours.
 */
export async function sendWithoutCrossOriginRedirects(send: Fetch, request: Request): Promise<Response> {
  let current = new Request(request, { redirect: "manual" });
  for (let hops = 0; ; hops++) {
    const response = await send(current);
    // A browser hides where a manual redirect goes: a GET follows it under the fetch spec's own
    // rules (CORS, Authorization dropped across origins); a request with a body is not sent twice.
    if (response.type === "opaqueredirect") {
      if (current.method !== "GET" && current.method !== "HEAD") {
        throw new RedirectRefusedError(0, current.url, `a ${current.method} is not sent twice`);
      }
      return send(new Request(current, { redirect: "follow" }));
    }
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => {});
    const target = new URL(location, current.url);
    if (target.origin !== new URL(current.url).origin) {
      throw new RedirectRefusedError(
        response.status,
        target.origin,
        "it is another origin, and the request's credentials and body stay with the one asked",
      );
    }
    if (current.method !== "GET" && current.method !== "HEAD") {
      throw new RedirectRefusedError(response.status, target.href, `a ${current.method} is not sent twice`);
    }
    if (hops >= MAX_REDIRECTS) throw new RedirectRefusedError(response.status, target.href, "too many redirects");
    current = new Request(target, {
      method: current.method,
      headers: current.headers,
      signal: current.signal,
      redirect: "manual",
    });
  }
}

/**
 * A call's deadline: a controller aborted by a timer that holds it, and `expired`, which rejects
 * with RequestTimeoutError at the same moment. AbortSignal.timeout's signal, and the signals that
 * follow it through AbortSignal.any and copies of a Request, are held only weakly along the way: a
 * garbage collection while an answer is awaited can drop a link, and the abort never arrives. So
 * what waits on the network also races `expired`, which nothing can collect before it fires.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  readonly expired: Promise<never>;
}

export function startDeadline(timeoutMs: number): Deadline {
  const controller = new AbortController();
  let expire: (error: RequestTimeoutError) => void = () => {};
  const expired = new Promise<never>((_, reject) => {
    expire = reject;
  });
  expired.catch(() => {});
  const timer = setTimeout(() => {
    const error = new RequestTimeoutError(timeoutMs);
    controller.abort(error);
    expire(error);
  }, timeoutMs);
  // In Node, a deadline keeps no finished process alive; browsers have no unref.
  (timer as { unref?: () => void }).unref?.();
  return { signal: controller.signal, expired };
}

/**
 * The response with its body read through a counter: past `maxBytes` the stream errors with
 * ResponseTooLargeError and the connection is dropped; a read that fails after the deadline
 * errors with RequestTimeoutError.
 */
export function limitBody(
  response: Response,
  maxBytes: number,
  timedOut: () => Error | undefined,
  expired?: Promise<never>,
): Response {
  if (!response.body || response.status === 204 || response.status === 205 || response.status === 304) {
    return response;
  }
  const reader = response.body.getReader();
  let total = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await (expired ? Promise.race([reader.read(), expired]) : reader.read());
      } catch (error) {
        await reader.cancel().catch(() => {});
        controller.error(timedOut() ?? error);
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      total += chunk.value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        controller.error(new ResponseTooLargeError(maxBytes));
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** At most `maxBytes` of a body as text; the rest is not read (an error page is short). */
export async function readTextUpTo(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } catch {
    // What arrived before the failure is what there is to say.
  } finally {
    await reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(total, maxBytes));
  let offset = 0;
  for (const c of chunks) {
    const part = c.subarray(0, all.length - offset);
    all.set(part, offset);
    offset += part.length;
    if (offset >= all.length) break;
  }
  return new TextDecoder().decode(all);
}
