import { hash } from "node:crypto";
import { LRUCache } from "lru-cache";

/**
 * A short-lived cache keyed by a token's hash (the token itself is never kept as a key). With
 * `tagsOf`, each resolved value is also filed under the ids it names (its token's, its user's, its
 * organization's), so that revoking one of them through this gateway can forget it at once.
 */
export class TokenCache<T> {
  private readonly entries: LRUCache<string, Promise<T>>;
  private readonly tagsOf: ((value: T) => readonly (string | undefined)[]) | undefined;
  /** The keys filed under each tag; a key leaves its tags when it leaves the cache. */
  private readonly byTag = new Map<string, Set<string>>();
  private readonly tagsByKey = new Map<string, readonly string[]>();
  /** Counts `forgetTagged`: a resolution that saw it change while on its way is not kept. */
  private forgets = 0;

  constructor(ttlMs: number, maxEntries = 50_000, tagsOf?: (value: T) => readonly (string | undefined)[]) {
    this.tagsOf = tagsOf;
    this.entries = new LRUCache({
      max: maxEntries,
      ttl: ttlMs,
      ...(tagsOf ? { dispose: (_value: Promise<T>, key: string) => this.untag(key) } : {}),
    });
  }

  static keyOf(token: string): string {
    return hash("sha256", token, "base64url");
  }

  get(token: string, load: () => Promise<T>): Promise<T> {
    const key = TokenCache.keyOf(token);
    const hit = this.entries.get(key);
    if (hit) return hit;
    const value = load();
    const forgets = this.forgets;
    this.entries.set(key, value);
    value.then(
      (resolved) => {
        if (this.entries.peek(key) !== value) return;
        // An id was revoked while this was resolving, before it could be filed under its tags:
        // what it answered may be what was revoked, so the next request asks again.
        if (forgets !== this.forgets) this.entries.delete(key);
        else if (this.tagsOf) this.tag(key, resolved);
      },
      // Failures are not cached: the next request asks again.
      () => {
        if (this.entries.peek(key) === value) this.entries.delete(key);
      },
    );
    return value;
  }

  /** Forgets a token at once (its credential was just revoked through this gateway). */
  forget(token: string): void {
    this.forgetKey(TokenCache.keyOf(token));
  }

  /** Forgets a token by its hash (`keyOf`), as another replica names it. */
  forgetKey(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every value filed under this id (a token, session, user, organization or project id). */
  forgetTagged(tag: string): void {
    this.forgets += 1;
    const keys = this.byTag.get(tag);
    if (!keys) return;
    for (const key of [...keys]) this.entries.delete(key);
  }

  private tag(key: string, value: T): void {
    const tags = [...new Set((this.tagsOf as NonNullable<typeof this.tagsOf>)(value))].filter(
      (t): t is string => typeof t === "string" && t !== "",
    );
    this.tagsByKey.set(key, tags);
    for (const t of tags) {
      let keys = this.byTag.get(t);
      if (!keys) {
        keys = new Set();
        this.byTag.set(t, keys);
      }
      keys.add(key);
    }
  }

  private untag(key: string): void {
    const tags = this.tagsByKey.get(key);
    if (!tags) return;
    this.tagsByKey.delete(key);
    for (const t of tags) {
      const keys = this.byTag.get(t);
      keys?.delete(key);
      if (keys?.size === 0) this.byTag.delete(t);
    }
  }
}
