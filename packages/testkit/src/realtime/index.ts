import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/** The vendor's PCM format: 16-bit little-endian mono at 24 kHz. */
export const SAMPLE_RATE = 24_000;

export interface RealtimeStandInOptions {
  /** RMS (of 16-bit samples) above which a chunk counts as speech. */
  speechRms?: number;
  /** Silence that ends an utterance. */
  silenceMs?: number;
  /** Length and pitch of the tone each response speaks. */
  toneMs?: number;
  toneHz?: number;
  /** Audio per delta, and the pause between deltas (the pace of the stream). */
  deltaMs?: number;
  deltaIntervalMs?: number;
  /** The transcript of what each response "says". */
  answerText?: string;
}

export interface RecordedClientEvent {
  connection: number;
  /** Whether the session had been confirmed (session.updated sent) when this event arrived. */
  afterSessionUpdated: boolean;
  event: Record<string, unknown> & { type: string };
}

export interface RealtimeStandIn {
  /** `ws://127.0.0.1:<port>/v1/realtime`: the value of VOICE_API_URL. */
  url: string;
  /** Every client event, in arrival order (audio payloads included). */
  events: RecordedClientEvent[];
  /** Authorization headers and `model` query of each connection. */
  connections: Array<{ authorization: string | undefined; model: string | null }>;
  /** Queues transcripts: each finished utterance is "recognised" as the next one. */
  script(transcripts: string[]): void;
  /** How many utterances have been transcribed so far (scripted or empty). */
  transcribed(): number;
  /** Closes every open socket abruptly (a dropped connection). */
  dropConnections(): void;
  /** Resolves once a client event of this type arrives (or rejects after timeoutMs). */
  waitFor(type: string, timeoutMs?: number): Promise<RecordedClientEvent>;
  eventTypes(): string[];
  close(): Promise<void>;
}

/** A sine tone as PCM16 at SAMPLE_RATE, continuing from sample `offset`. */
export function tone(ms: number, hz: number, amplitude = 8000, offset = 0): Buffer {
  const samples = Math.round((SAMPLE_RATE * ms) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    pcm.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * hz * (i + offset)) / SAMPLE_RATE)), i * 2);
  }
  return pcm;
}

export function silence(ms: number): Buffer {
  return Buffer.alloc(Math.round((SAMPLE_RATE * ms) / 1000) * 2);
}

/** Root mean square of PCM16 samples. */
export function rms(pcm: Buffer): number {
  const n = Math.floor(pcm.length / 2);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return Math.sqrt(sum / n);
}

/** Estimated pitch of a PCM16 tone from its zero crossings. */
export function dominantHz(pcm: Buffer): number {
  const n = Math.floor(pcm.length / 2);
  let crossings = 0;
  for (let i = 1; i < n; i++) if (pcm.readInt16LE((i - 1) * 2) < 0 !== pcm.readInt16LE(i * 2) < 0) crossings++;
  return (crossings / 2) * (SAMPLE_RATE / n);
}

interface Connection {
  socket: WebSocket;
  index: number;
  confirmed: boolean;
  speaking: boolean;
  silentMs: number;
  utteranceMs: number;
  response: { id: string; itemId: string; timer: NodeJS.Timeout | undefined } | undefined;
}

/**
 * A local stand-in of the vendor's realtime WebSocket API (GA event names). Speech is detected
 * by energy, not recognised: what an utterance "said" comes from `script()`. Responses speak a
 * known tone, so a test can tell the model's audio apart from anything else.
 */
export async function startRealtimeStandIn(options: RealtimeStandInOptions = {}): Promise<RealtimeStandIn> {
  const speechRms = options.speechRms ?? 500;
  const silenceMs = options.silenceMs ?? 300;
  const toneMs = options.toneMs ?? 600;
  const toneHz = options.toneHz ?? 440;
  const deltaMs = options.deltaMs ?? 100;
  const deltaIntervalMs = options.deltaIntervalMs ?? 20;
  const answerText = options.answerText ?? "The release is on track.";
  const events: RecordedClientEvent[] = [];
  const connections: RealtimeStandIn["connections"] = [];
  const transcripts: string[] = [];
  let utterances = 0;
  const open = new Set<Connection>();
  const waiters: Array<{ type: string; resolve: (e: RecordedClientEvent) => void }> = [];

  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/v1/realtime" });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const { port } = wss.address() as AddressInfo;

  const send = (c: Connection, event: Record<string, unknown>) => {
    if (c.socket.readyState === c.socket.OPEN)
      c.socket.send(JSON.stringify({ event_id: `event_${randomUUID()}`, ...event }));
  };

  const finishResponse = (c: Connection, status: "completed" | "cancelled") => {
    const r = c.response;
    if (!r) return;
    clearTimeout(r.timer);
    c.response = undefined;
    send(c, { type: "response.output_audio.done", response_id: r.id, item_id: r.itemId });
    send(c, {
      type: "response.output_audio_transcript.done",
      response_id: r.id,
      item_id: r.itemId,
      output_index: 0,
      content_index: 0,
      transcript: answerText,
    });
    send(c, {
      type: "response.done",
      response: {
        id: r.id,
        object: "realtime.response",
        status,
        usage: {
          total_tokens: 150,
          input_tokens: 100,
          output_tokens: 50,
          input_token_details: { audio_tokens: 90, text_tokens: 10, cached_tokens: 0 },
          output_token_details: { audio_tokens: 45, text_tokens: 5 },
        },
      },
    });
  };

  const startResponse = (c: Connection) => {
    const response = {
      id: `resp_${randomUUID()}`,
      itemId: `item_${randomUUID()}`,
      timer: undefined as NodeJS.Timeout | undefined,
    };
    c.response = response;
    send(c, { type: "response.created", response: { id: response.id, status: "in_progress" } });
    let sent = 0;
    const next = () => {
      if (c.response !== response) return;
      if (sent >= toneMs) return finishResponse(c, "completed");
      const ms = Math.min(deltaMs, toneMs - sent);
      const pcm = tone(ms, toneHz, 8000, Math.round((SAMPLE_RATE * sent) / 1000));
      sent += ms;
      send(c, {
        type: "response.output_audio.delta",
        response_id: response.id,
        item_id: response.itemId,
        output_index: 0,
        content_index: 0,
        delta: pcm.toString("base64"),
      });
      response.timer = setTimeout(next, deltaIntervalMs);
    };
    next();
  };

  // Energy-based voice activity detection over each appended chunk.
  const detect = (c: Connection, pcm: Buffer) => {
    const ms = (pcm.length / 2 / SAMPLE_RATE) * 1000;
    if (rms(pcm) > speechRms) {
      c.silentMs = 0;
      c.utteranceMs += ms;
      if (!c.speaking) {
        c.speaking = true;
        send(c, { type: "input_audio_buffer.speech_started", item_id: `item_${randomUUID()}` });
      }
      return;
    }
    if (!c.speaking) return;
    c.silentMs += ms;
    if (c.silentMs < silenceMs) return;
    c.speaking = false;
    const itemId = `item_${randomUUID()}`;
    send(c, { type: "input_audio_buffer.speech_stopped", item_id: itemId });
    send(c, { type: "input_audio_buffer.committed", item_id: itemId });
    utterances += 1;
    send(c, {
      type: "conversation.item.input_audio_transcription.completed",
      item_id: itemId,
      content_index: 0,
      transcript: transcripts.shift() ?? "",
    });
    c.utteranceMs = 0;
  };

  wss.on("connection", (socket, request) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    connections.push({ authorization: request.headers.authorization, model: url.searchParams.get("model") });
    const c: Connection = {
      socket,
      index: connections.length - 1,
      confirmed: false,
      speaking: false,
      silentMs: 0,
      utteranceMs: 0,
      response: undefined,
    };
    open.add(c);
    send(c, { type: "session.created", session: { type: "realtime", id: `sess_${randomUUID()}` } });
    socket.on("close", () => {
      open.delete(c);
      clearTimeout(c.response?.timer);
    });
    socket.on("message", (data) => {
      let event: RecordedClientEvent["event"];
      try {
        event = JSON.parse(String(data));
      } catch {
        return send(c, { type: "error", error: { type: "invalid_request_error", message: "not JSON" } });
      }
      const recorded = { connection: c.index, afterSessionUpdated: c.confirmed, event };
      events.push(recorded);
      for (const w of waiters.filter((w) => w.type === event.type)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(recorded);
      }
      switch (event.type) {
        case "session.update": {
          const session = event.session as { type?: string } | undefined;
          if (session?.type !== "realtime") {
            return send(c, {
              type: "error",
              error: {
                type: "invalid_request_error",
                code: "missing_required_parameter",
                message: "Missing required parameter: 'session.type'.",
                param: "session.type",
              },
            });
          }
          c.confirmed = true;
          return send(c, { type: "session.updated", session });
        }
        case "input_audio_buffer.append":
          return detect(c, Buffer.from(String(event.audio ?? ""), "base64"));
        case "response.create":
          if (c.response) {
            return send(c, {
              type: "error",
              error: {
                type: "invalid_request_error",
                code: "conversation_already_has_active_response",
                message: "Conversation already has an active response in progress.",
              },
            });
          }
          return startResponse(c);
        case "response.cancel":
          return finishResponse(c, "cancelled");
        case "conversation.item.truncate":
          return send(c, {
            type: "conversation.item.truncated",
            item_id: event.item_id,
            audio_end_ms: event.audio_end_ms,
          });
        default:
          return;
      }
    });
  });

  return {
    url: `ws://127.0.0.1:${port}/v1/realtime`,
    events,
    connections,
    script(next) {
      transcripts.push(...next);
    },
    transcribed: () => utterances,
    dropConnections() {
      for (const c of open) c.socket.terminate();
    },
    waitFor(type, timeoutMs = 5000) {
      const seen = events.find((e) => e.event.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          type,
          resolve: (e: RecordedClientEvent) => {
            clearTimeout(timer);
            resolve(e);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no ${type} from the client within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    eventTypes() {
      return events.map((e) => e.event.type);
    },
    close() {
      for (const c of open) c.socket.terminate();
      return new Promise((resolve) => wss.close(() => resolve()));
    },
  };
}
