import { LRUCache } from "lru-cache";
import type { ConnectionsContext } from "../context.ts";

/** How long a row read for the proxies is reused; a change made on another replica is seen after this. */
export const ROW_CACHE_TTL_MS = 5000;

/**
 * Rows the proxies read on every request (a cluster, an AWS connection), kept briefly per
 * replica: a change made through this replica drops its entry at once, one made on another
 * replica is seen within the TTL. Concurrent misses for one id share a single read.
 */
export class RowCache<T extends object> {
  private readonly cache: LRUCache<string, T>;
  private readonly pending = new Map<string, Promise<T | undefined>>();
  private readonly load: (id: string) => Promise<T | undefined>;

  constructor(load: (id: string) => Promise<T | undefined>, ttlMs = ROW_CACHE_TTL_MS) {
    this.load = load;
    this.cache = new LRUCache<string, T>({ max: 10_000, ttl: ttlMs });
  }

  async get(id: string): Promise<T | undefined> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    let pending = this.pending.get(id);
    if (!pending) {
      pending = this.load(id).finally(() => this.pending.delete(id));
      this.pending.set(id, pending);
    }
    const row = await pending;
    if (row) this.cache.set(id, row);
    return row;
  }

  forget(id: string): void {
    this.cache.delete(id);
  }
}

/** One cache of a kind per service instance (its context). */
export function perContext<T extends object>(
  make: (ctx: ConnectionsContext) => RowCache<T>,
): (ctx: ConnectionsContext) => RowCache<T> {
  const caches = new WeakMap<ConnectionsContext, RowCache<T>>();
  return (ctx) => {
    let cache = caches.get(ctx);
    if (!cache) {
      cache = make(ctx);
      caches.set(ctx, cache);
    }
    return cache;
  };
}
