import { hash } from "node:crypto";
import { LRUCache } from "lru-cache";

/** A short-lived cache keyed by a token's hash (the token itself is never kept as a key). */
export class TokenCache<T> {
  private readonly entries: LRUCache<string, Promise<T>>;

  constructor(ttlMs: number, maxEntries = 50_000) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }

  static keyOf(token: string): string {
    return hash("sha256", token, "base64url");
  }

  get(token: string, load: () => Promise<T>): Promise<T> {
    const key = TokenCache.keyOf(token);
    const hit = this.entries.get(key);
    if (hit) return hit;
    const value = load();
    this.entries.set(key, value);
    // Failures are not cached: the next request asks again.
    value.catch(() => {
      if (this.entries.peek(key) === value) this.entries.delete(key);
    });
    return value;
  }

  /** Forgets a token at once (its credential was just revoked through this gateway). */
  forget(token: string): void {
    this.entries.delete(TokenCache.keyOf(token));
  }
}
