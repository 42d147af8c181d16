import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { ProblemError } from "@agentplane/problem-details";
import { Agent, buildConnector, type Dispatcher, request, fetch as undiciFetch } from "undici";
import { AddressPolicy, stripBrackets } from "./address-policy.ts";

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 20_000;
export const MAX_REDIRECTS = 3;

export type RefusalReason =
  | "blocked-address"
  | "timeout"
  | "too-large"
  | "too-many-redirects"
  | "unreachable"
  | "invalid-url"
  /** The server answered something that is not what the protocol asks for (not JSON, not JSON-RPC). */
  | "bad-answer"
  | `http-${number}`;

/** A fetch made on a user's behalf that was refused or failed; answered as a 422 with the reason. */
export class FetchRefusedError extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, detail: string) {
    super(detail);
    this.name = "FetchRefusedError";
    this.reason = reason;
  }

  toProblem(what = "The URL"): ProblemError {
    return new ProblemError("unprocessable", {
      detail: `${what} could not be fetched: ${this.message}`,
      extensions: { reason: this.reason },
    });
  }
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface SafeFetcherOptions {
  policy?: AddressPolicy;
  /** DNS resolution (tests inject names); defaults to the system resolver, every address. */
  resolve?: Resolver;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export interface FetchedBody {
  url: string;
  status: number;
  headers: Headers;
  body: Buffer;
}

type FetchInit = NonNullable<Parameters<typeof undiciFetch>[1]>;

/**
 * Fetches URLs on a user's behalf without reaching internal networks. Names are resolved here and
 * every address checked; the socket then connects to the checked address itself (a custom undici
 * connector), so a DNS answer that changes between check and connect (rebinding) cannot redirect it.
 * Redirects are followed by hand, at most three, each target checked the same way.
 */
/** Said with every refused address: the one setting that lets an internal destination through. */
const ALLOW_HINT = " (an operator can allow it with CONNECTOR_ALLOWED_HOSTS)";

export class SafeFetcher {
  readonly policy: AddressPolicy;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  private readonly maxRedirects: number;
  private readonly resolve: Resolver;
  private readonly agent: Agent;

  constructor(options: SafeFetcherOptions = {}) {
    this.policy = options.policy ?? new AddressPolicy();
    this.resolve = options.resolve ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
    this.maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
    this.timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
    this.maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
    const base = buildConnector({ timeout: Math.min(this.timeoutMs, 10_000) });
    this.agent = new Agent({
      // Proxied AWS calls reuse connections across calls seconds apart (a TLS handshake each otherwise).
      keepAliveTimeout: 30_000,
      connect: (opts, callback) => {
        const port = Number(opts.port) || (opts.protocol === "https:" ? 443 : 80);
        this.checkedAddress(opts.hostname, port).then(
          (address) => base({ ...opts, hostname: address }, callback),
          (error: Error) => callback(error, null),
        );
      },
    });
  }

  /** One checked address for the host: the first the resolver returned that the policy allows. */
  async checkedAddress(hostname: string, port: number): Promise<string> {
    const host = stripBrackets(hostname);
    if (isIP(host)) {
      if (this.policy.allowsHost(host, port) || this.policy.allowsAddress(host)) return host;
      throw new FetchRefusedError("blocked-address", `${host} is not a public address${ALLOW_HINT}`);
    }
    let addresses: Array<{ address: string }>;
    try {
      addresses = await this.resolve(host);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new FetchRefusedError(
        "unreachable",
        `${host} does not resolve${code && code !== "ENOTFOUND" ? ` (${code})` : ""}`,
      );
    }
    if (this.policy.allowsHost(host, port)) {
      const first = addresses[0];
      if (first) return first.address;
    }
    const allowed = addresses.find((a) => this.policy.allowsAddress(a.address));
    if (!allowed)
      throw new FetchRefusedError("blocked-address", `${host} resolves only to non-public addresses${ALLOW_HINT}`);
    return allowed.address;
  }

  /** Throws `invalid-url` or `blocked-address` before any connection for URLs that can never pass. */
  checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FetchRefusedError("invalid-url", "not an absolute URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new FetchRefusedError("invalid-url", `scheme ${url.protocol} is not allowed`);
    }
    if (url.username || url.password) throw new FetchRefusedError("invalid-url", "credentials in URLs are not allowed");
    // WHATWG parsing already turned decimal, octal and hex IPv4 forms into dotted quads.
    const host = stripBrackets(url.hostname);
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    if (isIP(host) && !this.policy.allowsHost(host, port) && !this.policy.allowsAddress(host)) {
      throw new FetchRefusedError("blocked-address", `${host} is not a public address${ALLOW_HINT}`);
    }
    return url;
  }

  /**
   * A `fetch` with the same checks and redirect limit (for the MCP SDK transports and tool calls).
   * Bodies stream unread, each cut at the size cap (see `capped`); `fetchBody` reads one whole.
   */
  readonly fetch = async (input: string | URL | Request, init: FetchInit = {}): Promise<Response> => {
    let url = this.checkUrl(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    let currentInit: FetchInit = init;
    for (let hop = 0; ; hop++) {
      let response: Awaited<ReturnType<typeof undiciFetch>>;
      try {
        response = await undiciFetch(url, { ...currentInit, redirect: "manual", dispatcher: this.agent });
      } catch (error) {
        throw translate(error);
      }
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) return this.capped(response);
      await response.body?.cancel().catch(() => {});
      if (hop >= this.maxRedirects)
        throw new FetchRefusedError("too-many-redirects", `more than ${this.maxRedirects} redirects`);
      const next = this.checkUrl(new URL(location, url).href);
      // As fetchBody: the connector's credential and headers never follow a redirect off its origin.
      if (next.origin !== url.origin)
        currentInit = { ...currentInit, headers: withoutCredentials(headerRecord(currentInit.headers)) };
      url = next;
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && currentInit.method === "POST")
      ) {
        const { body: _body, ...rest } = currentInit;
        currentInit = { ...rest, method: "GET" };
      }
    }
  };

  /**
   * The answer with its body cut at `maxBytes`: past the cap the body errors with `too-large` and
   * the connection is let go, so a reader that takes it whole (the MCP SDK's `response.json()`, an
   * event stream that never ends an event) holds at most the cap, however much the server sends.
   */
  private capped(response: Awaited<ReturnType<typeof undiciFetch>>): Response {
    const answer = response as unknown as Response;
    if (!answer.body || NULL_BODY_STATUS.has(answer.status)) return answer;
    const limit = this.maxBytes;
    const declared = Number(answer.headers.get("content-length") ?? "0");
    // An event stream is read an event at a time (what a reader holds is the event not yet ended):
    // the cap applies from the last blank line on, so a long-lived stream of small events may go on.
    const events = /^text\/event-stream/i.test(answer.headers.get("content-type") ?? "");
    let seen = 0;
    const body =
      declared > limit
        ? new ReadableStream<Uint8Array>({
            start: (controller) => {
              void answer.body?.cancel().catch(() => {});
              controller.error(new FetchRefusedError("too-large", `the body exceeds ${limit} bytes`));
            },
          })
        : answer.body.pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, controller) {
                seen += chunk.byteLength;
                const ended = events ? lastEventEnd(chunk) : -1;
                if (ended >= 0) seen = chunk.byteLength - ended;
                if (seen > limit)
                  controller.error(new FetchRefusedError("too-large", `the body exceeds ${limit} bytes`));
                else controller.enqueue(chunk);
              },
            }),
          );
    return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  }

  /**
   * GET (or `init`) a URL and read its body within the size and time caps; non-2xx is `http-<status>`.
   * Sent with undici's `request` on the same checked dispatcher (lighter than `fetch` per call);
   * redirects are followed by hand like `fetch` does here, and a redirect to another origin keeps only
   * content negotiation headers, so a connector's credential never follows a redirect off its API.
   */
  async fetchBody(url: string, init: FetchInit = {}, options: { acceptErrors?: boolean } = {}): Promise<FetchedBody> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    const merged = init.signal ? AbortSignal.any([init.signal, signal]) : signal;
    let target = this.checkUrl(url);
    let method = (init.method ?? "GET").toUpperCase();
    let body = typeof init.body === "string" || init.body instanceof Uint8Array ? init.body : undefined;
    let headers = headerRecord(init.headers);
    try {
      for (let hop = 0; ; hop++) {
        const response = await request(target, {
          dispatcher: this.agent,
          method: method as Dispatcher.HttpMethod,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: merged,
        });
        const status = response.statusCode;
        const location = headerValue(response.headers.location);
        if (status >= 300 && status < 400 && location) {
          await response.body.dump().catch(() => {});
          if (hop >= this.maxRedirects) {
            throw new FetchRefusedError("too-many-redirects", `more than ${this.maxRedirects} redirects`);
          }
          const next = this.checkUrl(new URL(location, target).href);
          if (next.origin !== target.origin) headers = withoutCredentials(headers);
          target = next;
          if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
            method = "GET";
            body = undefined;
            headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== "content-type"));
          }
          continue;
        }
        if (!options.acceptErrors && (status < 200 || status >= 300)) {
          await response.body.dump().catch(() => {});
          throw new FetchRefusedError(`http-${status}`, `the server answered ${status}`);
        }
        if (Number(headerValue(response.headers["content-length"]) ?? "0") > this.maxBytes) {
          response.body.destroy();
          throw new FetchRefusedError("too-large", `the body exceeds ${this.maxBytes} bytes`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          size += chunk.byteLength;
          if (size > this.maxBytes) {
            response.body.destroy();
            throw new FetchRefusedError("too-large", `the body exceeds ${this.maxBytes} bytes`);
          }
          chunks.push(chunk);
        }
        const answered = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) answered.append(name, v);
        }
        return { url: target.href, status, headers: answered, body: Buffer.concat(chunks) };
      }
    } catch (error) {
      if (signal.aborted && !(error instanceof FetchRefusedError && error.reason === "too-large")) {
        throw new FetchRefusedError("timeout", `no complete answer within ${this.timeoutMs} ms`);
      }
      throw translate(error);
    }
  }

  /**
   * One request to a checked URL for a proxy: redirects are passed back, not followed; the body is
   * not read; the answer's headers must arrive within `headersTimeoutMs` (default: the fetcher's
   * timeout). A failure is a FetchRefusedError naming its cause (blocked, DNS, refused, TLS, timeout).
   */
  async send(
    url: URL,
    init: {
      method: string;
      headers: Record<string, string>;
      body?: Uint8Array | undefined;
      signal?: AbortSignal | undefined;
      headersTimeoutMs?: number;
    },
  ): Promise<Dispatcher.ResponseData> {
    const target = this.checkUrl(url.href);
    try {
      return await request(target, {
        dispatcher: this.agent,
        method: init.method as Dispatcher.HttpMethod,
        headers: init.headers,
        ...(init.body?.length ? { body: init.body } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
        headersTimeout: init.headersTimeoutMs ?? this.timeoutMs,
      });
    } catch (error) {
      throw translate(error);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** The index just past the last blank line (`\n\n` or `\n\r\n`) in the chunk, or -1. */
function lastEventEnd(chunk: Uint8Array): number {
  for (let i = chunk.byteLength - 1; i > 0; i--) {
    if (chunk[i] !== 10) continue;
    if (chunk[i - 1] === 10 || (i > 1 && chunk[i - 1] === 13 && chunk[i - 2] === 10)) return i + 1;
  }
  return -1;
}

/** Statuses a Response cannot be built with a body for (their bodies are empty anyway). */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/** What a request keeps when redirected to another origin: credentials may sit in any other header. */
const CROSS_ORIGIN_HEADERS = new Set(["accept", "accept-language", "content-type", "user-agent"]);

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name.toLowerCase())));
}

function headerRecord(headers: FetchInit["headers"]): Record<string, string> {
  return Object.fromEntries(new Headers(headers as ConstructorParameters<typeof Headers>[0]).entries());
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function translate(error: unknown): Error {
  if (error instanceof FetchRefusedError) return error;
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof FetchRefusedError) return cause;
    const failure = describeConnectionFailure(cause);
    if (failure) return new FetchRefusedError(failure.timeout ? "timeout" : "unreachable", failure.detail);
    cause = (cause as { cause?: unknown }).cause;
  }
  return new FetchRefusedError("unreachable", (error as Error)?.message ?? "connection failed");
}

/**
 * What went wrong reaching a server, in words an operator can act on (refused, DNS, TLS, timeout,
 * reset), from a Node or undici error; undefined for anything else.
 */
export function describeConnectionFailure(error: unknown): { detail: string; timeout: boolean } | undefined {
  const e = error as { name?: string; code?: string; message?: string; hostname?: string };
  const code = e?.code ?? "";
  const name = e?.name ?? "";
  if (
    name === "TimeoutError" ||
    name === "AbortError" ||
    name === "ConnectTimeoutError" ||
    name === "HeadersTimeoutError" ||
    code === "ETIMEDOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT" ||
    code === "UND_ERR_HEADERS_TIMEOUT"
  ) {
    return { detail: "the server did not answer in time", timeout: true };
  }
  if (code === "ECONNREFUSED") return { detail: "the connection was refused", timeout: false };
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") {
    return { detail: `${e.hostname ?? "the host name"} does not resolve (${code})`, timeout: false };
  }
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET") {
    return { detail: "the connection was closed before an answer", timeout: false };
  }
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return { detail: "no route to the host", timeout: false };
  if (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("ERR_SSL_") ||
    code === "EPROTO" ||
    /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)
  ) {
    return { detail: `TLS failed (${code}${e.message ? `: ${e.message}` : ""})`, timeout: false };
  }
  return undefined;
}
