import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/**
 * How long an egress connection may carry no byte in either direction before it is ended (5 min):
 * longer than the keepalives of long-lived protocols (WebSocket pings and SSE heartbeats every
 * 30–60 s, long polls of up to 2 min), about the idle timeouts of common load balancers.
 */
export const DEFAULT_EGRESS_IDLE_TIMEOUT_MS = 300_000;
/** New egress connection attempts a sandbox may make per second, sustained. */
export const DEFAULT_EGRESS_ATTEMPT_RATE = 50;
/** Attempts a sandbox may make at once before the sustained rate applies (a parallel install's start). */
export const DEFAULT_EGRESS_ATTEMPT_BURST = 200;
/** A sandbox's refused attempts are logged at most this often, with how many there were. */
const REPORT_EVERY_MS = 60_000;
/** How long an ended idle connection's peers get to close their side before both are cut. */
const CLOSE_GRACE_MS = 1000;

/**
 * A token bucket of one sandbox's new connection attempts: `burst` at once, refilled at `rate` a
 * second. Two numbers per sandbox, refilled when asked, so a refused attempt costs no timer.
 */
export class AttemptBucket {
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private at: number;
  private unreported = 0;
  private reportedAt = Number.NEGATIVE_INFINITY;

  constructor(rate: number, burst: number, now: () => number = Date.now) {
    this.rate = rate;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.at = now();
  }

  /** Takes one attempt: 0 when admitted, else how many ms until the next one would be. */
  take(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    this.unreported += 1;
    return Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }

  /** The refusals to log now (at most once a minute: those since the last report), else 0. */
  report(): number {
    const now = this.now();
    if (this.unreported === 0 || now - this.reportedAt < REPORT_EVERY_MS) return 0;
    const refused = this.unreported;
    this.unreported = 0;
    this.reportedAt = now;
    return refused;
  }
}

/**
 * Ends an idle tunnel on both sides: each peer gets a FIN (its half of the conversation is over),
 * and what has not closed after a short grace is cut.
 */
export function endBoth(client: Duplex, upstream: Duplex): void {
  (client as Socket).setTimeout?.(0);
  upstream.unpipe(client);
  client.unpipe(upstream);
  client.end();
  upstream.end();
  const cut = setTimeout(() => {
    client.destroy();
    upstream.destroy();
  }, CLOSE_GRACE_MS);
  cut.unref();
  client.once("close", () => clearTimeout(cut));
}
