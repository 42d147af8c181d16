/** How failed requests are retried. */
export interface RetryOptions {
  /** Further attempts after the first (default 3). */
  retries?: number;
  /** The first back-off step; each further step doubles, with full jitter (default 250 ms). */
  baseDelayMs?: number;
  /** The longest single wait, `Retry-After` included (default 20 s). */
  maxDelayMs?: number;
  /** The cap on all waits of one request added up; a wait past it is not taken (default 60 s). */
  maxTotalWaitMs?: number;
  /** Retry POST and PATCH too (default false: only idempotent methods are retried). */
  nonIdempotent?: boolean;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
}

type Fetch = (request: Request) => Promise<Response>;

const RETRY_STATUSES = new Set([408, 429, 502, 503, 504]);
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A failure of the connection itself (reset, refused, DNS), as fetch reports it; not an abort. */
function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error) || error.name === "AbortError" || error.name === "TimeoutError") return false;
  return error instanceof TypeError;
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Wraps a fetch with retries for 408/429/502/503/504 and connection errors: exponential back-off
 * with full jitter, `Retry-After` honoured, `x-should-retry: false` obeyed, idempotent methods
 * only unless `nonIdempotent`, and a cap on the total wait.
 */
export function withRetries(fetchImpl: Fetch, options: RetryOptions = {}): Fetch {
  const retries = options.retries ?? 3;
  const base = options.baseDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 20_000;
  const maxTotal = options.maxTotalWaitMs ?? 60_000;
  const random = options.random ?? Math.random;

  return async (request) => {
    const retryable = options.nonIdempotent || IDEMPOTENT.has(request.method.toUpperCase());
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      // A Request body can be read once: each attempt sends a copy, the original stays unread.
      const copy = attempt < retries && retryable ? request.clone() : request;
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await fetchImpl(copy);
      } catch (error) {
        failure = error;
      }
      const shouldRetryHeader = response?.headers.get("x-should-retry");
      const wanted =
        shouldRetryHeader === "false"
          ? false
          : response
            ? RETRY_STATUSES.has(response.status) || shouldRetryHeader === "true"
            : isConnectionError(failure);
      if (!wanted || !retryable || attempt >= retries) {
        if (response) return response;
        throw failure;
      }
      const backoff = random() * Math.min(maxDelay, base * 2 ** attempt);
      const hinted = retryAfterMs(response?.headers.get("retry-after") ?? null);
      const delay = hinted !== undefined ? hinted : backoff;
      if (delay > maxDelay || waited + delay > maxTotal) {
        if (response) return response;
        throw failure;
      }
      // The answer we give up on is drained so its connection can be reused.
      await response?.body?.cancel().catch(() => {});
      await sleep(delay, request.signal);
      waited += delay;
    }
  };
}
