import {
  dominantHz,
  type RealtimeStandIn,
  rms,
  silence,
  startRealtimeStandIn,
  tone,
} from "@agentplane/testkit/realtime";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { isAddressed, RealtimeClient, type RealtimeHandlers } from "../../src/voice/realtime.ts";

const logger = pino({ level: "silent" });
let stand: RealtimeStandIn | undefined;
let client: RealtimeClient | undefined;

afterEach(async () => {
  client?.close();
  await stand?.close();
  client = undefined;
  stand = undefined;
});

async function connect(
  handlers: RealtimeHandlers,
  toneMs?: number,
): Promise<{ stand: RealtimeStandIn; client: RealtimeClient }> {
  stand = await startRealtimeStandIn({ silenceMs: 200, ...(toneMs ? { toneMs } : {}) });
  client = new RealtimeClient(
    {
      url: stand.url,
      apiKey: "vk-test",
      instructions: "Be brief.",
      names: ["Prism", "Pris"],
      logger,
      connectTimeoutMs: 3000,
    },
    handlers,
  );
  await client.connect();
  return { stand, client };
}

/** Speech-like energy (a 220 Hz tone) and the silence that ends the utterance, in 20 ms chunks. */
function speak(c: RealtimeClient, speechMs: number, silenceMs = 300): void {
  for (let t = 0; t < speechMs; t += 20) c.appendAudio(tone(20, 220, 6000, (t * 24_000) / 1000));
  for (let t = 0; t < silenceMs; t += 20) c.appendAudio(silence(20));
}

const until = async (check: () => boolean, timeoutMs = 3000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("realtime API client", () => {
  it("configures the session (GA shape) and waits for session.updated before streaming", async () => {
    const { stand, client } = await connect({});
    expect(stand.connections[0]).toEqual({ authorization: "Bearer vk-test", model: "gpt-realtime" });
    expect(stand.events[0]?.event).toMatchObject({
      type: "session.update",
      session: {
        type: "realtime",
        audio: {
          input: {
            format: { type: "audio/pcm", rate: 24_000 },
            transcription: { prompt: expect.stringContaining("Prism") },
            turn_detection: { create_response: false, interrupt_response: false },
          },
        },
      },
    });
    speak(client, 100, 0);
    await until(() => stand.eventTypes().includes("input_audio_buffer.append"));
    expect(
      stand.events.filter((e) => e.event.type === "input_audio_buffer.append").every((e) => e.afterSessionUpdated),
    ).toBe(true);
  });

  it("answers when addressed: response.create, tone deltas, usage from response.done", async () => {
    const audio: Buffer[] = [];
    const heard: Array<[string, boolean]> = [];
    const { stand, client } = await connect({
      onAudio: (pcm) => audio.push(pcm),
      onTranscript: (t, a) => heard.push([t, a]),
    });
    stand.script(["Hey Prism, what is on the agenda?"]);
    speak(client, 400);
    await stand.waitFor("response.create");
    await until(() => client.usage.responses === 1);
    expect(heard).toEqual([["Hey Prism, what is on the agenda?", true]]);
    const pcm = Buffer.concat(audio);
    expect(pcm.length / 2 / 24_000).toBeCloseTo(0.6, 2);
    expect(rms(pcm)).toBeGreaterThan(4000);
    expect(dominantHz(pcm)).toBeGreaterThan(430);
    expect(dominantHz(pcm)).toBeLessThan(450);
    expect(client.usage).toMatchObject({
      inputTokens: 100,
      outputTokens: 50,
      inputAudioTokens: 90,
      outputAudioTokens: 45,
    });
    // The transcript decides; it is never sent to the model as text.
    expect(stand.eventTypes()).not.toContain("conversation.item.create");
  });

  it("stays silent when not addressed", async () => {
    const heard: Array<[string, boolean]> = [];
    const { stand, client } = await connect({ onTranscript: (t, a) => heard.push([t, a]) });
    stand.script(["Over to you, Sam", "The prismatic slide is next"]);
    speak(client, 300);
    speak(client, 300);
    await until(() => heard.length === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(heard).toEqual([
      ["Over to you, Sam", false],
      ["The prismatic slide is next", false],
    ]);
    expect(stand.eventTypes()).not.toContain("response.create");
  });

  it("cancels and truncates the answer when someone speaks over it, and flushes playback", async () => {
    let flushed = 0;
    const audio: Buffer[] = [];
    const { stand, client } = await connect({ onAudio: (p) => audio.push(p), onFlush: () => flushed++ }, 5000);
    stand.script(["Prism, summarise please"]);
    speak(client, 300);
    await stand.waitFor("response.create");
    await until(() => audio.length >= 3);
    speak(client, 200, 0);
    const truncate = await stand.waitFor("conversation.item.truncate");
    expect(stand.eventTypes()).toContain("response.cancel");
    expect(flushed).toBe(1);
    const end = Number(truncate.event.audio_end_ms);
    expect(end).toBeGreaterThanOrEqual(300);
    expect(end).toBeLessThan(5000);
    await until(() => client.usage.responses === 1);
  });

  it("flushes an answer that is done but still playing when someone speaks over it", async () => {
    let flushed = 0;
    // 3 s of audio arrives in about 0.6 s: response.done comes long before the meeting heard it all.
    const { stand, client } = await connect({ onFlush: () => flushed++ }, 3000);
    stand.script(["Prism, summarise please"]);
    speak(client, 300);
    await stand.waitFor("response.create");
    await until(() => client.usage.responses === 1);
    speak(client, 200, 0);
    const truncate = await stand.waitFor("conversation.item.truncate");
    expect(flushed).toBe(1);
    expect(stand.eventTypes()).not.toContain("response.cancel");
    expect(Number(truncate.event.audio_end_ms)).toBeLessThan(3000);
  });

  it("reconnects once on a dropped socket, then gives up on the second drop", async () => {
    const failures: string[] = [];
    const { stand, client } = await connect({ onFailed: (reason) => failures.push(reason) });
    stand.dropConnections();
    await until(() => stand.connections.length === 2 && client.ready);
    expect(stand.events.filter((e) => e.event.type === "session.update").map((e) => e.connection)).toEqual([0, 1]);
    stand.script(["Prism, are you back?"]);
    speak(client, 300);
    await stand.waitFor("response.create");
    stand.dropConnections();
    await until(() => failures.length === 1);
    expect(failures[0]).toMatch(/dropped again/);
    expect(stand.connections).toHaveLength(2);
  });

  it("matches names as whole words only", () => {
    expect(isAddressed("hey PRISM!", ["Prism"])).toBe(true);
    expect(isAddressed("prismatic colours", ["Prism"])).toBe(false);
  });
});
