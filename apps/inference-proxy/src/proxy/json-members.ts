import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-bytes.ts";

/** Member names longer than this are not among those kept (and are not held while read). */
const MAX_NAME_BYTES = 64;

/**
 * Keeps the named top-level members of a JSON object document as it streams past, holding nothing
 * else: for answers too large to keep whole (a completion with log probabilities, a large batch
 * of embeddings), whose usage comes after megabytes of content. Strings are skipped whole
 * (escapes included), brackets counted, and only a member at the top level is kept, so a `usage`
 * inside the content (a tool's input, text) is never taken for the answer's. Each kept value is
 * at most `maxValueBytes`; a longer one is dropped.
 */
export class TopLevelMembers {
  private readonly names: ReadonlySet<string>;
  private readonly maxValueBytes: number;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At the top level, the next string is a member name (after `{` or `,`). */
  private expectName = false;
  private name: number[] | undefined;
  private lastName = "";
  /** The name whose value is being kept, and its bytes so far. */
  private keeping: string | undefined;
  private value: number[] = [];
  private readonly kept: Record<string, unknown> = {};

  constructor(names: ReadonlySet<string>, maxValueBytes = 64 * 1024) {
    this.names = names;
    this.maxValueBytes = maxValueBytes;
  }

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) this.byte(chunk[i] as number);
  }

  /** The members kept, each parsed (one that is not valid JSON, or cut off, is left out). */
  result(): Record<string, unknown> {
    return this.kept;
  }

  private byte(c: number): void {
    if (this.keeping !== undefined) {
      if (this.value.length < this.maxValueBytes) this.value.push(c);
      else this.keeping = undefined;
    }
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) {
        this.inString = false;
        if (this.name) {
          this.lastName = Buffer.from(this.name).toString("utf8");
          this.name = undefined;
        }
        return;
      }
      if (this.name) {
        if (this.name.length < MAX_NAME_BYTES) this.name.push(c);
        else this.name = undefined;
      }
      return;
    }
    if (c === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectName) {
        this.expectName = false;
        this.lastName = "";
        this.name = [];
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      this.depth++;
      if (this.depth === 1) this.expectName = true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (this.depth === 1) this.endValue();
      this.depth--;
    } else if (this.depth === 1 && c === COMMA) {
      this.endValue();
      this.expectName = true;
    } else if (this.depth === 1 && c === COLON) {
      if (this.names.has(this.lastName)) {
        this.keeping = this.lastName;
        this.value = [];
      }
      this.lastName = "";
    }
  }

  /** The kept value ended at the `,` or `}` just read (which is not part of it). */
  private endValue(): void {
    if (this.keeping === undefined) return;
    const name = this.keeping;
    this.keeping = undefined;
    const bytes = this.value.slice(0, -1);
    this.value = [];
    try {
      this.kept[name] = JSON.parse(Buffer.from(bytes).toString("utf8"));
    } catch {
      // Not JSON after all: left out.
    }
  }
}
