/**
 * The event type of a delivery (spec "Inbound webhook events"): the code-hosting headers first,
 * then a top-level `event_type`, else `unknown`. Nested types (PagerDuty v3 `event.event_type`)
 * are deliberately not looked at.
 */
export function resolveEventType(
  header: (name: string) => string | undefined,
  payload: Record<string, unknown>,
): string {
  const github = header("x-github-event")?.trim();
  if (github) return github;
  const gitlab = header("x-gitlab-event")?.trim();
  if (gitlab) return gitlab;
  const field = payload.event_type;
  if (typeof field === "string" && field.trim() !== "") return field.trim();
  return "unknown";
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
