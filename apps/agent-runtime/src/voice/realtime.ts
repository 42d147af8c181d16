import type { Logger } from "pino";
import WebSocket from "ws";

/** Vendor defaults when VOICE_REALTIME_MODEL / _VOICE / VOICE_TRANSCRIPTION_MODEL are unset. */
export const DEFAULT_REALTIME_MODEL = "gpt-realtime";
export const DEFAULT_REALTIME_VOICE = "marin";
// The streaming transcriber that takes a prompt, which is where the name hints go.
export const DEFAULT_TRANSCRIPTION_MODEL = "gpt-4o-transcribe";

export interface RealtimeUsage {
  responses: number;
  inputTokens: number;
  outputTokens: number;
  inputAudioTokens: number;
  outputAudioTokens: number;
}

export interface RealtimeClientOptions {
  /** VOICE_API_URL, e.g. wss://api.openai.com/v1/realtime. */
  url: string;
  apiKey: string;
  model?: string;
  voice?: string;
  transcriptionModel?: string;
  instructions: string;
  /** The agent's name and aliases: transcription hints, and what "addressed" means. */
  names: string[];
  logger: Logger;
  /** How long to wait for a socket to open and the session to be confirmed. */
  connectTimeoutMs?: number;
}

export interface RealtimeHandlers {
  /** PCM16 24 kHz mono of the model's answer, in order. */
  onAudio?(pcm: Buffer): void;
  /** Someone spoke over the agent: drop queued playback. */
  onFlush?(): void;
  /** An answer finished (or was cancelled). */
  onResponseDone?(): void;
  /** The transcript of what the model said in one answer. */
  onAnswer?(text: string): void;
  /** Every finished transcript, and whether it addressed the agent. */
  onTranscript?(text: string, addressed: boolean): void;
  /** The socket dropped twice (or could not reconnect): the call cannot go on. */
  onFailed?(reason: string): void;
}

/** Whether a transcript speaks to the agent: one of its names as a whole word. */
export function isAddressed(transcript: string, names: readonly string[]): boolean {
  const text = transcript.toLowerCase();
  return names.some((name) => {
    const escaped = name
      .toLowerCase()
      .trim()
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return escaped !== "" && new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, "u").test(text);
  });
}

type ServerEvent = { type: string; [key: string]: unknown };

/**
 * Audio waiting to be sent at most (some 16 s of it, base64 in JSON): past it the vendor has
 * stopped reading (hung, or the connection is half-open with nothing to close it), and the
 * connection counts as dropped. Without a bound every second of the call waited in memory, and
 * the agent sat deaf in the meeting until its cap.
 */
export const MAX_SEND_BACKLOG_BYTES = 2 ** 20;

/**
 * A session with the vendor's realtime API over one WebSocket. Automatic responses are off: the
 * transcript of each utterance decides whether the agent was addressed, and only then is a
 * response requested (the transcript itself is never sent; the model hears the audio). A socket
 * that drops is reopened once; a second drop ends the session through `onFailed`.
 */
export class RealtimeClient {
  readonly usage: RealtimeUsage = {
    responses: 0,
    inputTokens: 0,
    outputTokens: 0,
    inputAudioTokens: 0,
    outputAudioTokens: 0,
  };
  readonly #options: RealtimeClientOptions;
  readonly #handlers: RealtimeHandlers;
  #socket: WebSocket | undefined;
  #ready = false;
  #closed = false;
  #reconnected = false;
  /** The last connection was dropped because the vendor stopped reading (said in the failure). */
  #stalled = false;
  /** The response being spoken: its assistant item and how much of its audio arrived. */
  #response: { itemId: string | undefined; audioMs: number } | undefined;
  /**
   * The last answer's playback: the API sends audio faster than it is spoken, so an answer can
   * be done (response.done) while the meeting still hears it.
   */
  #playback: { itemId: string; startedAt: number; audioMs: number } | undefined;

  constructor(options: RealtimeClientOptions, handlers: RealtimeHandlers = {}) {
    this.#options = options;
    this.#handlers = handlers;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Opens the socket and resolves once the session is confirmed (`session.updated`). */
  async connect(): Promise<void> {
    const model = this.#options.model ?? DEFAULT_REALTIME_MODEL;
    const url = new URL(this.#options.url);
    url.searchParams.set("model", model);
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${this.#options.apiKey}` } });
    this.#socket = socket;
    this.#ready = false;
    const timeoutMs = this.#options.connectTimeoutMs ?? 15_000;
    /** This socket's session was confirmed (`#ready` also falls when a confirmed one is given up). */
    let confirmed = false;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`the realtime session was not confirmed within ${timeoutMs} ms`));
      }, timeoutMs);
      // A failed attempt ends its socket: a refused handshake (HTTP 401) otherwise left its
      // connection open, and an `error` event before confirmation left the session half made.
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
        socket.terminate();
      };
      socket.on("error", fail);
      socket.once("unexpected-response", (_req, res) =>
        fail(new Error(`the realtime API answered HTTP ${res.statusCode}`)),
      );
      socket.once("open", () => socket.send(JSON.stringify(this.#sessionUpdate(model))));
      socket.on("message", (data) => {
        const event = serverEvent(data);
        if (!event) {
          this.#options.logger.warn("the realtime API sent a frame that is not an event; skipped");
          return;
        }
        if (!this.#ready && event.type === "session.updated") {
          clearTimeout(timer);
          socket.off("error", fail);
          socket.on("error", (err) => this.#options.logger.warn({ err: err.message }, "realtime socket error"));
          this.#ready = true;
          confirmed = true;
          resolve();
          return;
        }
        if (!this.#ready && event.type === "error") return fail(new Error(errorMessage(event)));
        this.#handle(event);
      });
      socket.once("close", () => {
        clearTimeout(timer);
        if (!confirmed) return reject(new Error("the realtime socket closed before the session was confirmed"));
        this.#dropped(socket);
      });
    });
  }

  /** Streams caller audio (PCM16 24 kHz mono); dropped while the session is not confirmed. */
  appendAudio(pcm: Buffer): void {
    if (!this.#ready) return;
    const socket = this.#socket;
    if (socket && socket.bufferedAmount > MAX_SEND_BACKLOG_BYTES) {
      this.#options.logger.warn(
        { unsentBytes: socket.bufferedAmount },
        "the realtime API stopped reading the call's audio; dropping the connection",
      );
      this.#ready = false;
      this.#stalled = true;
      socket.terminate();
      return;
    }
    this.#send({ type: "input_audio_buffer.append", audio: pcm.toString("base64") });
  }

  /** Asks for a spoken answer now (used for the apology on the way out, for instance). */
  respond(instructions?: string): void {
    this.#response = { itemId: undefined, audioMs: 0 };
    this.#send({ type: "response.create", ...(instructions ? { response: { instructions } } : {}) });
  }

  close(): void {
    this.#closed = true;
    this.#ready = false;
    this.#socket?.close();
  }

  #sessionUpdate(model: string): Record<string, unknown> {
    const o = this.#options;
    return {
      type: "session.update",
      session: {
        type: "realtime",
        model,
        instructions: o.instructions,
        output_modalities: ["audio"],
        audio: {
          input: {
            format: { type: "audio/pcm", rate: 24_000 },
            transcription: {
              model: o.transcriptionModel ?? DEFAULT_TRANSCRIPTION_MODEL,
              prompt: `Names that may be spoken: ${o.names.join(", ")}.`,
            },
            // The server finds turns; we decide whether to answer, and barge-in is handled here.
            turn_detection: { type: "server_vad", create_response: false, interrupt_response: false },
          },
          output: { format: { type: "audio/pcm", rate: 24_000 }, voice: o.voice ?? DEFAULT_REALTIME_VOICE },
        },
      },
    };
  }

  #handle(event: ServerEvent): void {
    switch (event.type) {
      case "conversation.item.input_audio_transcription.completed": {
        const text = String(event.transcript ?? "");
        const addressed = isAddressed(text, this.#options.names);
        this.#handlers.onTranscript?.(text, addressed);
        if (addressed && !this.#response) this.respond();
        return;
      }
      case "response.output_audio.delta": {
        const pcm = Buffer.from(String(event.delta ?? ""), "base64");
        if (!this.#response) this.#response = { itemId: undefined, audioMs: 0 };
        this.#response.itemId = String(event.item_id);
        const ms = (pcm.length / 2 / 24_000) * 1000;
        this.#response.audioMs += ms;
        const itemId = String(event.item_id);
        if (this.#playback?.itemId !== itemId) this.#playback = { itemId, startedAt: Date.now(), audioMs: 0 };
        this.#playback.audioMs += ms;
        this.#handlers.onAudio?.(pcm);
        return;
      }
      case "response.output_audio_transcript.done":
        this.#handlers.onAnswer?.(String(event.transcript ?? ""));
        return;
      case "input_audio_buffer.speech_started":
        this.#bargeIn();
        return;
      case "response.done": {
        this.#response = undefined;
        this.#handlers.onResponseDone?.();
        const usage = (event.response as { usage?: Record<string, unknown> } | undefined)?.usage;
        this.usage.responses++;
        if (usage) {
          this.usage.inputTokens += Number(usage.input_tokens ?? 0);
          this.usage.outputTokens += Number(usage.output_tokens ?? 0);
          this.usage.inputAudioTokens += Number(
            (usage.input_token_details as { audio_tokens?: number })?.audio_tokens ?? 0,
          );
          this.usage.outputAudioTokens += Number(
            (usage.output_token_details as { audio_tokens?: number })?.audio_tokens ?? 0,
          );
        }
        return;
      }
      case "error":
        this.#options.logger.warn({ error: errorMessage(event) }, "realtime API error");
        return;
      default:
        return;
    }
  }

  /** Someone speaks while the agent does: stop the answer and cut it where the audio got to. */
  #bargeIn(): void {
    const response = this.#response;
    if (!response) {
      // Done, but still being played: cut it where playback got to, and drop the rest.
      const playback = this.#playback;
      if (!playback) return;
      const played = Date.now() - playback.startedAt;
      this.#playback = undefined;
      if (played >= playback.audioMs) return;
      this.#send({
        type: "conversation.item.truncate",
        item_id: playback.itemId,
        content_index: 0,
        audio_end_ms: Math.floor(played),
      });
      this.#handlers.onFlush?.();
      return;
    }
    this.#playback = undefined;
    this.#response = undefined;
    this.#send({ type: "response.cancel" });
    if (response.itemId) {
      this.#send({
        type: "conversation.item.truncate",
        item_id: response.itemId,
        content_index: 0,
        audio_end_ms: Math.floor(response.audioMs),
      });
    }
    this.#handlers.onFlush?.();
  }

  #dropped(socket: WebSocket): void {
    if (this.#closed || socket !== this.#socket) return;
    this.#ready = false;
    this.#response = undefined;
    if (this.#reconnected) {
      const why = this.#stalled
        ? "the realtime API stopped reading the call's audio"
        : "the realtime connection dropped";
      this.#handlers.onFailed?.(`${why} again after one reconnect`);
      return;
    }
    this.#stalled = false;
    this.#reconnected = true;
    this.#options.logger.warn("realtime socket dropped; reconnecting once");
    this.connect().catch((err: Error) => this.#handlers.onFailed?.(`the realtime reconnect failed: ${err.message}`));
  }

  #send(event: Record<string, unknown>): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(event));
  }
}

/** A frame as a server event, or undefined when it is not a JSON object with a type (a proxy's error page, say). */
function serverEvent(data: WebSocket.RawData): ServerEvent | undefined {
  try {
    const event: unknown = JSON.parse(String(data));
    const type = (event as { type?: unknown } | null)?.type;
    return typeof event === "object" && event !== null && typeof type === "string" ? (event as ServerEvent) : undefined;
  } catch {
    return undefined;
  }
}

function errorMessage(event: ServerEvent): string {
  const error = event.error as { message?: string; code?: string } | undefined;
  return error?.message ?? error?.code ?? "unknown error";
}
