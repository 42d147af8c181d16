/** Conversations whose count is kept; the least recently touched is forgotten past it. */
export const BOT_TURN_CONVERSATIONS = 1000;

/**
 * The loop guard of CHAT_ALLOW_BOTS: per conversation (a thread, or a channel's top level), the
 * turns other bots' messages ran since a person last wrote there. Two agents (or an agent and any
 * auto-replying bot) would otherwise answer each other without end. Bounded: the counts of the
 * most recent conversations only (a forgotten one starts again at zero).
 */
export class BotTurnGuard {
  readonly #max: number;
  readonly #limit: number;
  readonly #counts = new Map<string, number>();

  constructor(max: number, limit = BOT_TURN_CONVERSATIONS) {
    this.#max = max;
    this.#limit = limit;
  }

  /** A person wrote in the conversation: bots may run turns there again. */
  human(conversation: string): void {
    this.#counts.delete(conversation);
  }

  /** A bot wrote: true (and counted) while fewer than the maximum bot turns ran in a row there. */
  takeBotTurn(conversation: string): boolean {
    const count = this.#counts.get(conversation) ?? 0;
    if (count >= this.#max) return false;
    this.#counts.delete(conversation);
    this.#counts.set(conversation, count + 1);
    if (this.#counts.size > this.#limit) {
      const oldest = this.#counts.keys().next().value;
      if (oldest !== undefined) this.#counts.delete(oldest);
    }
    return true;
  }
}
