import { InFlightBound } from "../http/in-flight-bound.ts";

/** Web chat turns one thread may have in flight: the web UI sends one at a time; room for a second client. */
export const MAX_WEB_TURNS_PER_THREAD = 4;
/** Web chat turns in flight across all threads. */
export const MAX_WEB_TURNS = 16;

/**
 * The web chat turns in flight (`POST /agents/threads/{id}/messages`), counted per thread and in
 * total. Each one is a model call or more, tools run in parallel, and a stream held open: as team
 * chat's turns are (docs/decisions/0033), they are bounded, so a client that posts messages in a
 * loop (or creates threads and posts to each) starts a few turns, not a hundred.
 */
export class WebTurnSlots extends InFlightBound {
  constructor() {
    super(MAX_WEB_TURNS_PER_THREAD, MAX_WEB_TURNS, "turns");
  }
}
