const RECORD = Symbol("record");
const REAL = Symbol("real");
/** A header name as fetch accepts it (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `Headers` read straight from a record of lower-case names the gateway already checked (they came
 * from Node's HTTP parser or from the gateway itself): `get`, `has` and iteration answer from the
 * record without building undici's Headers (a validation of every name and value per request).
 * The first change (`set`, `append`, `delete`), `getSetCookie` or an invalid name builds the real
 * Headers, which answers everything from then on.
 */
class RecordHeaders {
  [RECORD]: Record<string, string>;
  [REAL]?: Headers;

  constructor(record: Record<string, string>) {
    this[RECORD] = record;
  }

  get(name: string): string | null {
    if (this[REAL]) return this[REAL].get(name);
    const key = name.toLowerCase();
    if (Object.hasOwn(this[RECORD], key)) return this[RECORD][key] as string;
    return TOKEN.test(name) ? null : real(this).get(name);
  }

  has(name: string): boolean {
    if (this[REAL]) return this[REAL].has(name);
    const key = name.toLowerCase();
    return Object.hasOwn(this[RECORD], key) || (!TOKEN.test(name) && real(this).has(name));
  }

  set(name: string, value: string): void {
    real(this).set(name, value);
  }

  append(name: string, value: string): void {
    real(this).append(name, value);
  }

  delete(name: string): void {
    real(this).delete(name);
  }

  getSetCookie(): string[] {
    return real(this).getSetCookie();
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    if (this[REAL]) {
      this[REAL].forEach((value, key) => {
        callback.call(thisArg, value, key, this as unknown as Headers);
      });
      return;
    }
    const record = this[RECORD];
    for (const key of Object.keys(record).sort()) {
      callback.call(thisArg, record[key] as string, key, this as unknown as Headers);
    }
  }

  *entries(): Generator<[string, string], undefined> {
    if (this[REAL]) {
      yield* this[REAL].entries();
      return undefined;
    }
    // Sorted by name, as Headers iterates.
    const record = this[RECORD];
    for (const key of Object.keys(record).sort()) yield [key, record[key] as string];
    return undefined;
  }

  *keys(): Generator<string, undefined> {
    for (const [key] of this.entries()) yield key;
    return undefined;
  }

  *values(): Generator<string, undefined> {
    for (const [, value] of this.entries()) yield value;
    return undefined;
  }

  [Symbol.iterator](): Generator<[string, string], undefined> {
    return this.entries();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): Headers {
    return real(this);
  }
}

function real(self: RecordHeaders): Headers {
  self[REAL] ??= new Headers(self[RECORD]);
  return self[REAL];
}

Object.setPrototypeOf(RecordHeaders.prototype, Headers.prototype);

/** A `Headers` over `record` (lower-case names, values already valid); see `RecordHeaders`. */
export function recordHeaders(record: Record<string, string>): Headers {
  return new RecordHeaders(record) as unknown as Headers;
}
