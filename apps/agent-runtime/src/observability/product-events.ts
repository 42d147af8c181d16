// Product telemetry: what the runtime does, as OTLP log records that carry only identifiers,
// enums, flags, counts and durations. The catalog below is the allowlist: an event or attribute
// that is not in it cannot be emitted (a type error at the call, and dropped at run time with a
// count), and each value is checked against its kind, so no credential, URL, file path or message
// content can leave through here even by mistake. The catalog is documented in the README.
import type { Telemetry } from "@agentplane/telemetry";

const RUN_SOURCES = ["web", "webhook", "heartbeat", "schedule", "team_chat", "command"] as const;

/** The kind of each attribute value. */
type Kind = "id" | "count" | "duration_ms" | "flag" | readonly string[];

/** Every event and its attributes. */
export const PRODUCT_EVENTS = {
  "agent.started": {
    "agent.id": "id",
    provider: ["cloud-a", "cloud-a-alt", "cloud-b"],
    "gateway.used": "flag",
    "tracing.enabled": "flag",
    "team_chat.enabled": "flag",
    "plugins.count": "count",
  },
  "turn.completed": {
    "thread.id": "id",
    "run.source": RUN_SOURCES,
    "turn.steps": "count",
    "turn.delivered": "count",
    "turn.step_limit_reached": "flag",
    "turn.duration_ms": "duration_ms",
    "context.tokens": "count",
  },
  "turn.failed": { "thread.id": "id", "run.source": RUN_SOURCES, "turn.duration_ms": "duration_ms" },
  "webhook.accepted": { "webhook.subscription": "id", "webhook.mode": ["agent", "deliver_only"] },
  "webhook.ignored": { "webhook.subscription": "id", reason: ["event_not_subscribed"] },
  "webhook.rejected": {
    reason: ["receiver_disabled", "unknown_subscription", "inactive", "bad_body"],
  },
  "run.delivered": { "run.id": "id", "webhook.subscription": "id", "run.duration_ms": "duration_ms" },
  "run.failed": { "run.id": "id", "webhook.subscription": "id" },
  "heartbeat.delivered": { "run.id": "id", "gate.failed_open": "flag", "run.duration_ms": "duration_ms" },
  "heartbeat.suppressed": { "run.id": "id", "run.duration_ms": "duration_ms" },
  "schedule.run": {
    "schedule.id": "id",
    "run.id": "id",
    outcome: ["delivered", "failed"],
    "run.duration_ms": "duration_ms",
  },
  "compaction.ran": { "thread.id": "id", "compaction.messages": "count", trigger: ["threshold", "command"] },
  "memory.search": { "memory.results": "count", "memory.duration_ms": "duration_ms" },
  "meeting.ended": {
    "meeting.state": ["ended", "denied", "admission-timeout"],
    "meeting.admitted": "flag",
    "meeting.duration_ms": "duration_ms",
    "meeting.responses": "count",
    "realtime.input_audio_ms": "duration_ms",
    "realtime.output_audio_ms": "duration_ms",
    "transcription.audio_ms": "duration_ms",
  },
  "team_chat.connected": { "team_chat.mode": ["personal", "team"], "team_chat.owner_paired": "flag" },
} as const satisfies Record<string, Record<string, Kind>>;

export type ProductEventName = keyof typeof PRODUCT_EVENTS;
type ValueOf<K> = K extends "id" ? string : K extends "flag" ? boolean : K extends readonly (infer E)[] ? E : number;
/** The attributes an event may carry, each typed by its kind. */
export type ProductEventAttributes<E extends ProductEventName> = {
  [A in keyof (typeof PRODUCT_EVENTS)[E]]?: ValueOf<(typeof PRODUCT_EVENTS)[E][A]>;
};

/** Our ids (`sbx_…`, UUIDs, slugs): letters, digits, `_`, `-`, `.`, `:`; nothing with `/`, `@` or spaces. */
const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

function accepts(kind: Kind, value: unknown): boolean {
  if (Array.isArray(kind)) return typeof value === "string" && kind.includes(value);
  switch (kind) {
    case "id":
      return typeof value === "string" && ID.test(value) && !value.includes("..");
    case "flag":
      return typeof value === "boolean";
    default:
      return typeof value === "number" && Number.isFinite(value) && value >= 0;
  }
}

export interface ProductTelemetry {
  emit<E extends ProductEventName>(name: E, attributes: ProductEventAttributes<E>): void;
  /** Attributes dropped by the run-time guard (never exported). */
  readonly refused: number;
}

export function productTelemetry(telemetry: Telemetry): ProductTelemetry {
  let refused = 0;
  return {
    get refused() {
      return refused;
    },
    emit(name, attributes) {
      if (!telemetry.enabled) return;
      const allowed = PRODUCT_EVENTS[name] as Record<string, Kind> | undefined;
      if (!allowed) {
        refused += 1;
        return;
      }
      const clean: Record<string, string | number | boolean> = {};
      for (const [key, value] of Object.entries(attributes as Record<string, unknown>)) {
        if (value === undefined) continue;
        const kind = allowed[key];
        if (kind && accepts(kind, value)) {
          clean[key] = typeof value === "number" ? Math.round(value) : (value as string | boolean);
        } else refused += 1;
      }
      telemetry.emit(name, clean);
    },
  };
}
