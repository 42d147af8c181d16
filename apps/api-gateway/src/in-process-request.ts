import type { OutgoingRequest } from "@agentplane/service-kit";
import { recordHeaders } from "./record-headers.ts";

const OUTGOING = Symbol("outgoing");
const ORIGIN = Symbol("origin");
const HEADERS = Symbol("headers");
const REAL = Symbol("real");
const USED = Symbol("used");

interface Fields {
  [OUTGOING]: OutgoingRequest & { body?: Uint8Array | null };
  [ORIGIN]: string;
  [HEADERS]?: Headers;
  [REAL]?: Request;
  [USED]?: boolean;
}

function real(self: Fields): Request {
  if (!self[REAL]) {
    const out = self[OUTGOING];
    self[REAL] = new Request(self[ORIGIN] + out.path, {
      method: out.method,
      headers: (self as unknown as Request).headers,
      ...(out.body && !self[USED] ? { body: out.body } : {}),
      redirect: "manual",
      ...(out.signal ? { signal: out.signal } : {}),
    });
  }
  return self[REAL];
}

/** The body read whole, or the reason it cannot be (read before, as `fetch` says). */
function takeBytes(self: Fields): Uint8Array {
  if (self[USED] || self[REAL]?.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
  self[USED] = true;
  return self[OUTGOING].body ?? new Uint8Array(0);
}

function fast<T>(self: Fields, read: (bytes: Uint8Array) => T, slow: (request: Request) => Promise<T>): Promise<T> {
  if (self[REAL]) return slow(self[REAL]);
  try {
    return Promise.resolve(read(takeBytes(self)));
  } catch (err) {
    return Promise.reject(err);
  }
}

const decoder = new TextDecoder();

class InProcessRequest implements Fields {
  [OUTGOING]: OutgoingRequest & { body?: Uint8Array | null };
  [ORIGIN]: string;
  [HEADERS]?: Headers;
  [REAL]?: Request;
  [USED]?: boolean;

  constructor(origin: string, outgoing: OutgoingRequest & { body?: Uint8Array | null }) {
    this[OUTGOING] = outgoing;
    this[ORIGIN] = origin;
  }

  get method() {
    return this[OUTGOING].method;
  }
  get url() {
    return this[ORIGIN] + this[OUTGOING].path;
  }
  get headers() {
    this[HEADERS] ??= recordHeaders(this[OUTGOING].headers);
    return this[HEADERS];
  }
  get signal() {
    return this[OUTGOING].signal ?? real(this).signal;
  }
  get body() {
    return real(this).body;
  }
  get bodyUsed() {
    return this[USED] === true || (this[REAL]?.bodyUsed ?? false);
  }
  arrayBuffer() {
    return fast(
      this,
      (b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer,
      (r) => r.arrayBuffer(),
    );
  }
  bytes() {
    return fast(
      this,
      (b) => new Uint8Array(b),
      (r) => r.bytes(),
    );
  }
  text() {
    return fast(
      this,
      (b) => decoder.decode(b),
      (r) => r.text(),
    );
  }
  json() {
    return fast(
      this,
      (b) => JSON.parse(decoder.decode(b)) as unknown,
      (r) => r.json(),
    );
  }
  blob() {
    return real(this).blob();
  }
  formData() {
    return real(this).formData();
  }
  clone() {
    return real(this).clone();
  }
}

// Everything else a Request has (cache, mode, redirect...) is the real Request's.
for (const name of [
  "cache",
  "credentials",
  "destination",
  "duplex",
  "integrity",
  "keepalive",
  "mode",
  "redirect",
  "referrer",
  "referrerPolicy",
] as const) {
  Object.defineProperty(InProcessRequest.prototype, name, {
    get(this: Fields) {
      return real(this)[name as keyof Request];
    },
  });
}
Object.setPrototypeOf(InProcessRequest.prototype, Request.prototype);

/**
 * A forwarded request with a body already read whole (or none), as a service answering in process
 * receives it: a `Request` whose method, URL, headers, signal and body reads come straight from the
 * forwarded request, without building undici's Request (header validation, a followed abort
 * signal, a body stream) for each call. Whatever else is asked of it is answered by a real Request
 * built then.
 */
export function inProcessRequest(origin: string, outgoing: OutgoingRequest & { body?: Uint8Array | null }): Request {
  return new InProcessRequest(origin, outgoing) as unknown as Request;
}
