import { LRUCache } from "lru-cache";

/** How long repeats of one refusal are counted instead of recorded (see docs/decisions/0037). */
export const DEFAULT_REFUSAL_WINDOW_MS = 60_000;
/** At most this many (sandbox, host, port, rule) keys are tracked; the least recent is summarised first. */
const MAX_KEYS = 10_000;

/** Writes one refusal record; `repeats` is set on the summary of a window's suppressed repeats. */
export type RefusalWriter = (summary?: { repeats: number; windowSeconds: number }) => Promise<void>;

interface Entry {
  repeats: number;
  write: RefusalWriter;
  timer?: NodeJS.Timeout;
}

/**
 * Bounds the audit records of a sandbox that retries a refused destination: within a window the
 * first refusal of a key is recorded at once, the repeats are only counted, and when the window
 * ends one record carries how many there were. Memory is an LRU of keys.
 */
export class RefusalWindow {
  readonly windowMs: number;
  private readonly entries: LRUCache<string, Entry>;
  private readonly onError: (err: unknown) => void;

  constructor(options: { windowMs?: number; max?: number; onError?: (err: unknown) => void } = {}) {
    this.windowMs = options.windowMs ?? DEFAULT_REFUSAL_WINDOW_MS;
    this.onError = options.onError ?? (() => {});
    this.entries = new LRUCache<string, Entry>({
      max: options.max ?? MAX_KEYS,
      // An evicted key with counted repeats is summarised now rather than lost.
      dispose: (entry, _key, reason) => {
        if (reason === "evict") this.summarise(entry);
      },
    });
  }

  /** Records the refusal now (first of its window) or counts it (a repeat). */
  async refused(key: string, write: RefusalWriter): Promise<void> {
    const entry = this.entries.get(key);
    if (entry) {
      entry.repeats += 1;
      entry.write = write;
      return;
    }
    const fresh: Entry = { repeats: 0, write };
    fresh.timer = setTimeout(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
      this.summarise(fresh);
    }, this.windowMs);
    fresh.timer.unref();
    this.entries.set(key, fresh);
    await write();
  }

  /** Writes the summaries of every open window (on shutdown). */
  async flush(): Promise<void> {
    const open = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(open.map((e) => this.summarise(e)));
  }

  private summarise(entry: Entry): Promise<void> {
    clearTimeout(entry.timer);
    const repeats = entry.repeats;
    entry.repeats = 0;
    if (repeats === 0) return Promise.resolve();
    return entry.write({ repeats, windowSeconds: this.windowMs / 1000 }).catch(this.onError);
  }
}
