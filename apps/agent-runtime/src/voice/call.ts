import type { Page } from "playwright-core";
import { IN_BINDING, pageAudioScript } from "./page-audio.ts";
import { RealtimeClient, type RealtimeClientOptions, type RealtimeUsage } from "./realtime.ts";

/** What one call heard and said, for the summary and the usage records. */
export interface CallRecord {
  transcripts: Array<{ at: string; text: string; addressed: boolean }>;
  /** What the agent said (the transcripts of its answers). */
  answers: string[];
  responses: number;
  /** Seconds of audio sent to the realtime API (also what the transcriber is billed for). */
  inputAudioSeconds: number;
  /** Seconds of the model's audio played into the meeting. */
  outputAudioSeconds: number;
  usage: RealtimeUsage;
}

/** The audio side of one meeting attempt, as the meeting browser drives it. */
export interface MeetingCall {
  /** Before the meeting page loads: the in-page bridge and its binding. */
  prepare(page: Page): Promise<void>;
  /** Once admitted: the realtime session is confirmed and the page's audio flows both ways. */
  start(page: Page): Promise<void>;
  /** Set when the call cannot go on (the realtime connection is gone). */
  readonly failure: string | undefined;
  /** The call cannot go on: say so in the meeting when a realtime session can still be had. */
  apologize(timeoutMs?: number): Promise<boolean>;
  /** The record so far, while the call goes on (the usage is written from it as the call goes). */
  snapshot(): CallRecord;
  /** Ends the audio; the record of what was said. */
  stop(): Promise<CallRecord>;
}

const BYTES_PER_SECOND = 24_000 * 2;

export const APOLOGY_INSTRUCTIONS =
  "Apologise in one short sentence: a technical problem with your voice connection means you have to leave the meeting now.";

/** Bridges the meeting page's audio and the vendor's realtime API. */
export class RealtimeMeetingCall implements MeetingCall {
  readonly #options: RealtimeClientOptions;
  #client: RealtimeClient | undefined;
  #page: Page | undefined;
  #failure: string | undefined;
  #inBytes = 0;
  #outBytes = 0;
  readonly #transcripts: CallRecord["transcripts"] = [];
  readonly #answers: string[] = [];

  constructor(options: RealtimeClientOptions) {
    this.#options = options;
  }

  get failure(): string | undefined {
    return this.#failure;
  }

  async prepare(page: Page): Promise<void> {
    await page.exposeFunction(IN_BINDING, (b64: string) => {
      const client = this.#client;
      if (!client?.ready) return;
      const pcm = Buffer.from(b64, "base64");
      this.#inBytes += pcm.length;
      client.appendAudio(pcm);
    });
    await page.addInitScript(pageAudioScript());
  }

  async start(page: Page): Promise<void> {
    this.#page = page;
    const play = (fn: string, arg?: string) =>
      page
        .evaluate(
          ([f, a]) => {
            const bridge = (globalThis as unknown as { __agentplaneAudio: Record<string, (x?: string) => void> })
              .__agentplaneAudio;
            bridge[f as string]?.(a);
          },
          [fn, arg] as const,
        )
        .catch(() => {});
    this.#client = new RealtimeClient(this.#options, {
      onAudio: (pcm) => {
        this.#outBytes += pcm.length;
        void play("play", pcm.toString("base64"));
      },
      onFlush: () => void play("flush"),
      onTranscript: (text, addressed) => {
        this.#transcripts.push({ at: new Date().toISOString(), text, addressed });
      },
      onAnswer: (text) => {
        if (text) this.#answers.push(text);
      },
      onFailed: (reason) => {
        this.#failure = reason;
      },
    });
    await this.#client.connect();
    await page.evaluate(() =>
      (globalThis as unknown as { __agentplaneAudio: { start(): Promise<void> } }).__agentplaneAudio.start(),
    );
  }

  /**
   * One fresh session, used for nothing but the apology: it is spoken into the meeting, then the
   * session closes. False when no session could be had or the answer did not finish in time.
   */
  async apologize(timeoutMs = 15_000): Promise<boolean> {
    const page = this.#page;
    if (!page) return false;
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const client = new RealtimeClient(
      { ...this.#options, connectTimeoutMs: Math.min(this.#options.connectTimeoutMs ?? 5_000, timeoutMs) },
      {
        onAudio: (pcm) => {
          this.#outBytes += pcm.length;
          void this.#evaluate("play", pcm.toString("base64"));
        },
        onAnswer: (text) => {
          if (text) this.#answers.push(text);
        },
        onResponseDone: () => done(),
      },
    );
    const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
    try {
      const spoken = await Promise.race([
        (async () => {
          await client.connect();
          client.respond(APOLOGY_INSTRUCTIONS);
          await finished;
          return true;
        })(),
        timer,
      ]);
      if (spoken) await this.#evaluate("drain");
      return spoken;
    } catch {
      return false;
    } finally {
      this.#usageOf(client);
      client.close();
    }
  }

  /** Sessions opened after the main one (the apology's): their usage counts too. */
  readonly #extra: RealtimeClient[] = [];

  #usageOf(client: RealtimeClient): void {
    this.#extra.push(client);
  }

  #evaluate(fn: string, arg?: string): Promise<void> {
    const page = this.#page;
    if (!page) return Promise.resolve();
    return page
      .evaluate(
        ([f, a]) => {
          const bridge = (globalThis as unknown as { __agentplaneAudio: Record<string, (x?: string) => unknown> })
            .__agentplaneAudio;
          return bridge[f as string]?.(a);
        },
        [fn, arg] as const,
      )
      .then(
        () => {},
        () => {},
      );
  }

  async stop(): Promise<CallRecord> {
    await this.#page
      ?.evaluate(() => (globalThis as unknown as { __agentplaneAudio?: { stop(): void } }).__agentplaneAudio?.stop())
      .catch(() => {});
    this.#client?.close();
    return this.snapshot();
  }

  snapshot(): CallRecord {
    const usage: RealtimeUsage = {
      responses: 0,
      inputTokens: 0,
      outputTokens: 0,
      inputAudioTokens: 0,
      outputAudioTokens: 0,
    };
    for (const client of [this.#client, ...this.#extra]) {
      if (!client) continue;
      for (const key of Object.keys(usage) as (keyof RealtimeUsage)[]) usage[key] += client.usage[key];
    }
    return {
      transcripts: [...this.#transcripts],
      answers: [...this.#answers],
      responses: usage.responses,
      inputAudioSeconds: this.#inBytes / BYTES_PER_SECOND,
      outputAudioSeconds: this.#outBytes / BYTES_PER_SECOND,
      usage: { ...usage },
    };
  }
}
