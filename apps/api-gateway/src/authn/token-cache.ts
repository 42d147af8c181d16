import { createHash } from "node:crypto";

/** A short-lived cache keyed by a token's hash (the token itself is never kept as a key). */
export class TokenCache<T> {
  private readonly entries = new Map<string, { expires: number; value: Promise<T> }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(ttlMs: number, maxEntries = 50_000) {
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  static keyOf(token: string): string {
    return createHash("sha256").update(token).digest("base64url");
  }

  get(token: string, load: () => Promise<T>): Promise<T> {
    const key = TokenCache.keyOf(token);
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = load();
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { expires: now + this.ttlMs, value });
    // Failures are not cached: the next request asks again.
    value.catch(() => this.entries.delete(key));
    return value;
  }
}
