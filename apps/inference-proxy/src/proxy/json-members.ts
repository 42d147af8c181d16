import { ProblemError } from "@agentplane/problem-details";
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-bytes.ts";

/**
 * Member names longer than this (as written, escapes included) are not among those kept, and are
 * not held while read: the longest name read, escaped letter by letter, fits.
 */
const MAX_NAME_BYTES = 256;

export interface TopLevelMembersOptions {
  /** The most bytes of a kept value; a longer one is dropped (default 64 KiB). */
  maxValueBytes?: number;
  /**
   * A name of `names` given twice is a 400, and so is a name given twice directly inside an object
   * value kept: parsers differ on which of the two counts.
   */
  refuseDuplicates?: boolean;
  /** Told each top-level member's name once its value ended (may throw to refuse the document). */
  onName?: (name: string) => void;
}

// Where the scan is: before the document, in the object, after it, or lost (not a JSON object).
const START = 0;
const NAME_OR_END = 1;
const NAME_NEXT = 2;
const NAME = 3;
const COLON_NEXT = 4;
const VALUE_START = 5;
const VALUE_STRING = 6;
const VALUE_NESTED = 7;
const VALUE_LITERAL = 8;
const AFTER_VALUE = 9;
const END = 10;
const BAD = 11;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

const duplicate = (name: string) =>
  new ProblemError("bad-request", {
    detail: `The body names "${name.slice(0, 64)}" twice; name each member once`,
  });

const ANY_NAME: ReadonlySet<string> = { has: () => true } as unknown as ReadonlySet<string>;

/**
 * Keeps the named top-level members of a JSON object document as it streams past, holding nothing
 * else: request bodies, and answers too large to keep whole (a completion with log probabilities,
 * a large batch of embeddings), whose usage comes after megabytes of content. Strings are skipped
 * whole (escapes included), brackets matched by kind, and only a member at the top level is kept,
 * so a `usage` inside the content (a tool's input, text) is never taken for the answer's. Each
 * kept value is parsed on its own once it ended. `complete()` says whether the bytes were one
 * well-formed JSON object (what is skipped is matched, not parsed: the provider parses it).
 */
export class TopLevelMembers {
  private readonly names: ReadonlySet<string>;
  private readonly maxValueBytes: number;
  private readonly refuseDuplicates: boolean;
  private readonly onName: ((name: string) => void) | undefined;
  private state = START;
  /** The last chunk ended inside a string of a nested value, and just after a backslash in a string. */
  private inString = false;
  private escaped = false;
  /** The closers a nested value still owes, innermost last. */
  private readonly closers: number[] = [];
  /** The member name being read (as written), and the last one read; `undefined` when too long. */
  private name: number[] | undefined = [];
  private nameEscaped = false;
  private lastName: string | undefined;
  /** The parts of the value being kept, and their size; undefined when it is not kept. */
  private parts: Uint8Array[] | undefined;
  private partsBytes = 0;
  /** A kept value was not valid JSON: not a document the proxy can read (`complete`). */
  private malformed = false;
  private readonly kept: Record<string, unknown> = {};

  constructor(names: ReadonlySet<string>, options: TopLevelMembersOptions | number = {}) {
    const o = typeof options === "number" ? { maxValueBytes: options } : options;
    this.names = names;
    this.maxValueBytes = o.maxValueBytes ?? 64 * 1024;
    this.refuseDuplicates = o.refuseDuplicates ?? false;
    this.onName = o.onName;
  }

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    /** Where the kept value's bytes in this chunk began. */
    let from = 0;
    while (i < n) {
      const state = this.state;
      if (state === VALUE_STRING || state === VALUE_NESTED || state === VALUE_LITERAL) {
        const end =
          state === VALUE_STRING
            ? this.stringEnd(chunk, i)
            : state === VALUE_NESTED
              ? this.nestedEnd(chunk, i)
              : literalEnd(chunk, i);
        if (end < 0) {
          // The value goes on in the next chunk: its part here is copied (the chunk is the caller's).
          this.keep(chunk, from, n, true);
          return;
        }
        this.keep(chunk, from, end, false);
        this.endValue();
        i = end;
        continue;
      }
      if (state === BAD) return;
      const c = chunk[i] as number;
      if (state === NAME) {
        i = this.readName(chunk, i);
        continue;
      }
      i++;
      if (isSpace(c)) continue;
      switch (state) {
        case START:
          this.state = c === OPEN_OBJECT ? NAME_OR_END : BAD;
          break;
        case NAME_OR_END:
        case NAME_NEXT:
          if (c === QUOTE) {
            this.state = NAME;
            this.name = [];
            this.nameEscaped = false;
          } else this.state = c === CLOSE_OBJECT && state === NAME_OR_END ? END : BAD;
          break;
        case COLON_NEXT:
          this.state = c === COLON ? VALUE_START : BAD;
          break;
        case VALUE_START:
          from = i - 1;
          this.parts = this.lastName !== undefined && this.names.has(this.lastName) ? [] : undefined;
          this.partsBytes = 0;
          if (c === QUOTE) {
            this.state = VALUE_STRING;
            this.escaped = false;
          } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
            this.state = VALUE_NESTED;
            this.inString = false;
            this.escaped = false;
            this.closers.push(c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY);
          } else if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY) this.state = BAD;
          else this.state = VALUE_LITERAL;
          break;
        case AFTER_VALUE:
          this.state = c === COMMA ? NAME_NEXT : c === CLOSE_OBJECT ? END : BAD;
          break;
        default:
          // END: only whitespace may follow the object.
          this.state = BAD;
      }
    }
    // A value that began at the chunk's last byte goes on in the next one.
    const state = this.state;
    if (state === VALUE_STRING || state === VALUE_NESTED || state === VALUE_LITERAL) this.keep(chunk, from, n, true);
  }

  /** The members kept so far, each parsed (one that is not valid JSON, or cut off, is left out). */
  result(): Record<string, unknown> {
    return this.kept;
  }

  /** The members kept, if the bytes pushed were one JSON object (its skipped values matched, not parsed). */
  complete(): Record<string, unknown> | undefined {
    return this.state === END && !this.malformed ? this.kept : undefined;
  }

  /** Reads the name from `i` (inside its quotes) to its closing quote or the chunk's end. */
  private readName(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    for (; i < n; i++) {
      const c = chunk[i] as number;
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) {
        this.escaped = true;
        this.nameEscaped = true;
      } else if (c === QUOTE) {
        this.state = COLON_NEXT;
        // A name whose escapes do not decode leaves the document unread (BAD).
        this.lastName = this.decodeName();
        return i + 1;
      }
      if (this.name) {
        if (this.name.length < MAX_NAME_BYTES) this.name.push(c);
        else this.name = undefined;
      }
    }
    return n;
  }

  private decodeName(): string | undefined {
    if (!this.name) return undefined;
    const raw = Buffer.from(this.name).toString("utf8");
    if (!this.nameEscaped) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      this.state = BAD;
      return undefined;
    }
  }

  /** Just past the closing quote of the string value going on at `i`; -1 when the chunk ends first. */
  private stringEnd(chunk: Uint8Array, i: number): number {
    const end = stringEnd(chunk, i, this.escaped);
    this.escaped = end === ENDS_ESCAPED;
    return end < 0 ? -1 : end;
  }

  /** Just past the bracket closing the nested value going on at `i`; -1 when the chunk ends first. */
  private nestedEnd(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const closers = this.closers;
    if (this.inString) {
      const end = stringEnd(chunk, i, this.escaped);
      if (end < 0) {
        this.escaped = end === ENDS_ESCAPED;
        return -1;
      }
      this.inString = false;
      this.escaped = false;
      i = end;
    }
    for (; i < n; i++) {
      const c = chunk[i] as number;
      if (c === QUOTE) {
        const end = stringEnd(chunk, i + 1, false);
        if (end < 0) {
          this.inString = true;
          this.escaped = end === ENDS_ESCAPED;
          return -1;
        }
        i = end - 1;
      } else if (c === OPEN_OBJECT) closers.push(CLOSE_OBJECT);
      else if (c === OPEN_ARRAY) closers.push(CLOSE_ARRAY);
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (closers.pop() !== c) {
          this.state = BAD;
          return n;
        }
        if (closers.length === 0) return i + 1;
      }
    }
    return -1;
  }

  /** Adds `chunk[from, to)` to the value kept, unless it outgrew `maxValueBytes` (then it is dropped). */
  private keep(chunk: Uint8Array, from: number, to: number, copy: boolean): void {
    if (!this.parts || to <= from) return;
    this.partsBytes += to - from;
    if (this.partsBytes > this.maxValueBytes) this.parts = undefined;
    else this.parts.push(copy ? chunk.slice(from, to) : chunk.subarray(from, to));
  }

  private endValue(): void {
    if (this.state === BAD) return;
    this.state = AFTER_VALUE;
    const name = this.lastName;
    this.lastName = undefined;
    const parts = this.parts;
    this.parts = undefined;
    if (name === undefined) return;
    this.onName?.(name);
    if (!parts || !this.names.has(name)) return;
    if (this.refuseDuplicates && Object.hasOwn(this.kept, name)) throw duplicate(name);
    const bytes = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts, this.partsBytes);
    const value = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.refuseDuplicates && value[0] === OPEN_OBJECT) {
      // An object read is scanned too, for a name inside it given twice.
      const inner = new TopLevelMembers(ANY_NAME, { maxValueBytes: Number.POSITIVE_INFINITY, refuseDuplicates: true });
      inner.push(value);
      const members = inner.complete();
      if (members === undefined) this.malformed = true;
      else this.kept[name] = members;
      return;
    }
    try {
      this.kept[name] = JSON.parse(value.toString("utf8"));
    } catch {
      // Not JSON after all: left out, and the document is not one the proxy can read.
      this.malformed = true;
    }
  }
}

/** `stringEnd` found no closing quote, and the chunk ends inside an escape (`\\` as its last byte). */
const ENDS_ESCAPED = -2;

/**
 * Just past the quote closing the string going on at `i` (its opening quote before `i`), `-1` when
 * the chunk ends first, `ENDS_ESCAPED` when it ends just after an unpaired backslash. The first
 * bytes are looked at one by one (most strings are short: names, roles, types); past them each
 * quote is found natively (`indexOf`), and closes the string unless an odd run of backslashes
 * precedes it.
 */
function stringEnd(chunk: Uint8Array, i: number, escaped: boolean): number {
  const n = chunk.length;
  const near = Math.min(n, i + SHORT_STRING);
  for (; i < near; i++) {
    const c = chunk[i];
    if (escaped) escaped = false;
    else if (c === BACKSLASH) escaped = true;
    else if (c === QUOTE) return i + 1;
  }
  if (i === n) return escaped ? ENDS_ESCAPED : -1;
  if (escaped) i++;
  const from = i;
  while (i < n) {
    const q = chunk.indexOf(QUOTE, i);
    if (q < 0) break;
    let run = 0;
    while (q - run - 1 >= from && chunk[q - run - 1] === BACKSLASH) run++;
    if (run % 2 === 0) return q + 1;
    i = q + 1;
  }
  let run = 0;
  while (n - run - 1 >= from && chunk[n - run - 1] === BACKSLASH) run++;
  return run % 2 === 1 ? ENDS_ESCAPED : -1;
}

/** Strings up to this many bytes are read byte by byte, longer ones searched natively for their end. */
const SHORT_STRING = 32;

/** Where the number or literal going on at `i` ends (at the next delimiter); -1 when the chunk ends first. */
function literalEnd(chunk: Uint8Array, i: number): number {
  const n = chunk.length;
  for (; i < n; i++) {
    const c = chunk[i];
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)
      return i;
  }
  return -1;
}
