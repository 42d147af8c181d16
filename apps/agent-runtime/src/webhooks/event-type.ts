import { HIDDEN_CHARACTERS } from "@agentplane/contracts/runtime";
import { ProblemError } from "@agentplane/problem-details";

/** Longer than any event type a sender names (GitHub's longest is under 40 characters). */
export const MAX_EVENT_TYPE_LENGTH = 100;

/**
 * The event type of a delivery (spec "Inbound webhook events"): the code-hosting headers first,
 * then a top-level `event_type`, else `unknown`. Nested types (PagerDuty v3 `event.event_type`)
 * are deliberately not looked at. The type is stored, echoed and put in failure notices: one
 * longer than MAX_EVENT_TYPE_LENGTH or holding control or bidirectional formatting characters
 * is a 400 naming where it came from.
 */
export function resolveEventType(
  header: (name: string) => string | undefined,
  payload: Record<string, unknown>,
): string {
  for (const name of ["x-github-event", "x-gitlab-event"]) {
    const value = header(name)?.trim();
    if (value) return checked(value, `The ${name} header`);
  }
  const field = payload.event_type;
  if (typeof field === "string" && field.trim() !== "") return checked(field.trim(), "The body's event_type");
  return "unknown";
}

function checked(type: string, source: string): string {
  if (type.length > MAX_EVENT_TYPE_LENGTH) {
    throw new ProblemError("bad-request", {
      detail: `${source} is longer than ${MAX_EVENT_TYPE_LENGTH} characters`,
    });
  }
  if (HIDDEN_CHARACTERS.test(type)) {
    throw new ProblemError("bad-request", {
      detail: `${source} holds control or bidirectional formatting characters`,
    });
  }
  return type;
}

/** The subscription's Events list; empty accepts every type. */
export function parseEventList(events: string): string[] {
  return events
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
}

export function eventAllowed(events: string[], event: string): boolean {
  return events.length === 0 || events.includes(event);
}
