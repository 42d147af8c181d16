import type Database from "better-sqlite3";

/** A delivery's answer, kept so a retry of it gets the same one. */
export interface DeliveryAnswer {
  status: "accepted" | "delivered" | "ignored";
  event: string;
  runId?: string;
}

export const DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/**
 * Deliveries with a sender's id (`X-GitHub-Delivery`, …) seen in the last 24 h, per subscription.
 * A sender's retry of a delivery gets the first answer instead of a second run. Concurrent
 * copies of one delivery wait for the first one's answer (in memory, by key).
 */
export class DeliveryLog {
  readonly #sqlite: Database.Database;
  readonly #inFlight = new Map<string, Promise<DeliveryAnswer>>();
  #lastPrune = 0;

  constructor(sqlite: Database.Database) {
    this.#sqlite = sqlite;
  }

  /**
   * The stored answer to this delivery, or runs `handle` once and stores its answer. A delivery
   * may be known by several keys (the sender's id, the signature of a signed one): any one of them
   * seen before makes it a duplicate, and the answer is stored under all of them. `handle` throwing
   * (a 400, a 429) or answering `ignored` stores nothing, so the sender's retry is handled again.
   */
  async once(
    subscription: string,
    deliveryKeys: readonly string[],
    handle: () => Promise<DeliveryAnswer>,
    nowMs = Date.now(),
  ): Promise<{ answer: DeliveryAnswer; duplicate: boolean }> {
    const keys = deliveryKeys.map((id) => `${subscription}\0${id}`);
    for (const key of keys) {
      const pending = this.#inFlight.get(key);
      if (!pending) continue;
      const answer = await pending.catch(() => undefined);
      if (answer) return { answer, duplicate: true };
    }
    const lookup = this.#sqlite.prepare(
      "select status, event, run_id from webhook_delivery where subscription = ? and delivery_id = ? and created_at > ?",
    );
    for (const deliveryId of deliveryKeys) {
      const seen = lookup.get(subscription, deliveryId, nowMs - DEDUPE_WINDOW_MS) as
        | { status: DeliveryAnswer["status"]; event: string; run_id: string | null }
        | undefined;
      if (seen) {
        return {
          answer: { status: seen.status, event: seen.event, ...(seen.run_id ? { runId: seen.run_id } : {}) },
          duplicate: true,
        };
      }
    }
    const run = handle();
    for (const key of keys) this.#inFlight.set(key, run);
    try {
      const answer = await run;
      // An ignored delivery changed nothing and its retry is ignored again: remembered, anyone could
      // add a row a day per post with a new delivery id and an event the subscription does not take.
      if (answer.status === "ignored") return { answer, duplicate: false };
      this.#prune(nowMs);
      const store = this.#sqlite.prepare(
        "insert or replace into webhook_delivery (subscription, delivery_id, status, event, run_id, created_at) values (?, ?, ?, ?, ?, ?)",
      );
      for (const deliveryId of deliveryKeys)
        store.run(subscription, deliveryId, answer.status, answer.event, answer.runId ?? null, nowMs);
      return { answer, duplicate: false };
    } finally {
      for (const key of keys) if (this.#inFlight.get(key) === run) this.#inFlight.delete(key);
    }
  }

  #prune(nowMs: number): void {
    if (nowMs - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = nowMs;
    this.#sqlite.prepare("delete from webhook_delivery where created_at <= ?").run(nowMs - DEDUPE_WINDOW_MS);
  }
}
