import type { Logger } from "pino";

/** Refused channels remembered so each is logged once; past it the memory starts over. */
const LOGGED_LIMIT = 1000;

/** What conversations.info says of a channel's sharing. */
export interface ChannelSharing {
  is_shared?: boolean;
  is_ext_shared?: boolean;
  is_pending_ext_shared?: boolean;
  is_org_shared?: boolean;
}

/** Shared with another organization (Slack Connect), or invited to be; a channel shared inside one Enterprise Grid org is not. */
export function externallyShared(info: ChannelSharing | undefined): boolean {
  if (!info) return false;
  return Boolean(info.is_ext_shared || info.is_pending_ext_shared || (info.is_shared && !info.is_org_shared));
}

/**
 * Which channels team mode may link and answer in: those of CHAT_ALLOWED_CHANNELS when it is set;
 * otherwise every channel but externally shared (Slack Connect) ones, which are taken only when
 * listed. A refused channel is logged once at info.
 */
export class ChannelGuard {
  readonly #allowed: ReadonlySet<string>;
  readonly #logger: Logger;
  readonly #logged = new Set<string>();
  /** Channels seen shared with another organization: deliveries skip them too. */
  readonly #shared = new Set<string>();

  constructor(allowed: readonly string[], logger: Logger) {
    this.#allowed = new Set(allowed);
    this.#logger = logger;
  }

  /**
   * Whether a delivery (webhook, heartbeat, schedule) may go to a linked channel: one linked before
   * the allow-list was set, or found shared since, gets none. Logs nothing.
   */
  delivers(channel: string): boolean {
    if (this.#allowed.has(channel)) return true;
    return this.#allowed.size === 0 && !this.#shared.has(channel);
  }

  /**
   * Why a channel may not be linked or answered in (`it is not in CHAT_ALLOWED_CHANNELS`, …), or
   * null when it may. Logs nothing: the channels view's link answers with the reason instead.
   */
  refusal(channel: string, extShared: boolean): string | null {
    if (extShared) {
      if (this.#shared.size >= LOGGED_LIMIT) this.#shared.clear();
      this.#shared.add(channel);
    }
    if (this.#allowed.has(channel)) return null;
    if (this.#allowed.size > 0) return "it is not in CHAT_ALLOWED_CHANNELS";
    if (extShared) return "it is externally shared (Slack Connect) and not in CHAT_ALLOWED_CHANNELS";
    return null;
  }

  /** Whether an invitation may link the channel and its messages run turns; a refusal is logged once. */
  allows(channel: string, extShared: boolean): boolean {
    const reason = this.refusal(channel, extShared);
    if (reason === null) return true;
    if (!this.#logged.has(channel)) {
      if (this.#logged.size >= LOGGED_LIMIT) this.#logged.clear();
      this.#logged.add(channel);
      this.#logger.info({ channel }, `team chat refused a channel: ${reason}; no link and no turns there`);
    }
    return false;
  }
}
