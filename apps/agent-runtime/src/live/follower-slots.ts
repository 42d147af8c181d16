import { InFlightBound } from "../http/in-flight-bound.ts";

/** Live streams one thread may have open at once: a person's tabs, the terminal UI, with room to spare. */
export const MAX_LIVE_FOLLOWERS_PER_THREAD = 16;
/** Live streams the runtime holds open at once, across all threads. */
export const MAX_LIVE_FOLLOWERS = 128;

/**
 * The open live streams, counted per thread and in total. Each one holds a connection, a timer and
 * a listener every event of its thread is written to: without a bound, a client that opens
 * streams in a loop holds the runtime's memory and sockets, and every event is written once per
 * stream.
 */
export class FollowerSlots extends InFlightBound {
  constructor() {
    super(MAX_LIVE_FOLLOWERS_PER_THREAD, MAX_LIVE_FOLLOWERS, "live streams");
  }
}
