/** States of one meeting attempt; the last four end it. */
export type MeetingState =
  | "signing-in"
  | "prejoin"
  | "asked"
  | "waiting"
  | "in-call"
  | "denied"
  | "admission-timeout"
  | "ended";

export const FINAL_STATES: ReadonlySet<MeetingState> = new Set(["denied", "admission-timeout", "ended"]);

export interface MeetingStatus {
  /** One attempt to join (`mtg_…`): the voice session's id in the usage records. */
  id: string;
  url: string;
  name: string;
  state: MeetingState;
  /** Why the attempt ended (final states only): `denied by the host`, `meeting cap reached`... */
  reason?: string;
  startedAt: string;
  admittedAt?: string;
  endedAt?: string;
}

/** What the voice tools drive: one meeting at a time. */
export interface MeetingController {
  /** Starts joining; answers once the join request is under way (or refused). */
  join(request: { url: URL; name: string; threadId: string }): Promise<MeetingStatus>;
  leave(): Promise<MeetingStatus | undefined>;
  status(): MeetingStatus | undefined;
  close(): Promise<void>;
}

export class MeetingBusyError extends Error {
  readonly current: MeetingStatus;
  constructor(current: MeetingStatus) {
    super(`Already in a meeting (${current.url}, ${current.state}); leave it before joining another`);
    this.name = "MeetingBusyError";
    this.current = current;
  }
}
