import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeUsage } from "@agentplane/contracts/runtime";
import { launchChromium, requireBinary, requireChromium } from "@agentplane/testkit/browser";
import { type MeetingStandIn, startMeetingStandIn } from "@agentplane/testkit/meeting";
import { type RealtimeStandIn, rms, startRealtimeStandIn } from "@agentplane/testkit/realtime";
import { attributesOf, type CollectorStandIn, startOtlpCollector } from "@agentplane/testkit/telemetry";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, type Reply, startFakeModel } from "../support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime } from "../support/runtime.ts";
import { scripted, text, toolResultsOf, toolUse } from "../support/script.ts";

const chromium = requireChromium();
const espeak = requireBinary("espeak-ng", "/usr/bin/espeak-ng");
const account = { email: "bot@example.com", password: "s3cret-pw" };

const until = async (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

const calls = (name: string, input: Record<string, unknown>): Reply => ({
  content: [toolUse(name, input)],
  stopReason: "tool_use",
});

/** Non-silent audio the realtime stand-in received (RMS of each appended chunk). */
const loudChunks = (realtime: RealtimeStandIn) =>
  realtime.events.filter(
    (e) => e.event.type === "input_audio_buffer.append" && rms(Buffer.from(String(e.event.audio), "base64")) > 500,
  ).length;

// Serial: one runtime, one meeting, one participant browser.
describe.skipIf(!chromium.available || !espeak.available)(
  `a meeting through the runtime's tools, with audio both ways${chromium.reason}${espeak.reason}`,
  () => {
    let fake: FakeModel;
    let meeting: MeetingStandIn;
    let realtime: RealtimeStandIn;
    let runtime: TestRuntime;
    let participantBrowser: Browser;
    let participant: Page;
    let otlp: CollectorStandIn;
    let closed = false;

    beforeAll(async () => {
      fake = await startFakeModel();
      meeting = await startMeetingStandIn(account);
      realtime = await startRealtimeStandIn();
      otlp = await startOtlpCollector();
      // The participant's voice, made now: "Hey Prism, ..." as a WAV.
      const dir = mkdtempSync(join(tmpdir(), "agent-voice-"));
      const wav = join(dir, "hey.wav");
      execFileSync("espeak-ng", ["-a", "200", "-w", wav, "Hey Prism, what is the status of the release?"]);
      meeting.setParticipantVoice(readFileSync(wav));
      runtime = await startTestRuntime(fake, {
        env: {
          VOICE_API_KEY: "vk-test",
          VOICE_API_URL: realtime.url,
          MEETING_BOT_EMAIL: account.email,
          MEETING_BOT_PASSWORD: account.password,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        },
        runtimeOptions: { voice: { meetingHosts: [meeting.host], signInOrigins: [meeting.origin], progressMs: 500 } },
      });
      // Host candidates must be real addresses (not mDNS names) for loopback WebRTC.
      participantBrowser = await launchChromium({
        args: ["--autoplay-policy=no-user-gesture-required", "--disable-features=WebRtcHideLocalIpsWithMdns"],
      });
    }, 60_000);

    afterAll(async () => {
      await participantBrowser?.close();
      if (!closed) await runtime?.close();
      await realtime?.close();
      await meeting?.close();
      await fake?.close();
      await otlp?.close();
    });

    async function chat(message: string): Promise<void> {
      const threads = await runtime.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
      const thread = threads.body.items.find((t) => t.main)?.id as string;
      const res = await runtime.request("POST", `/agents/threads/${thread}/messages`, { text: message });
      expect(res.status).toBe(200);
      await readSse(res);
    }

    it("joins on the model's join_meeting call, hears the participant, answers when addressed, leaves", async () => {
      fake.respond = scripted([calls("join_meeting", { url: meeting.meetingUrl }), text("Joining.")]);
      await chat("Please join the standup.");
      const joined = toolResultsOf(fake.requests.at(-1)?.body ?? {})[0];
      expect(joined?.is_error).not.toBe(true);
      expect(JSON.parse(joined?.content ?? "{}")).toMatchObject({ state: "asked", name: "Prism" });
      await until(() => meeting.state() === "waiting", "the request to join");
      expect(meeting.asks).toEqual(["Prism"]);
      meeting.admit();

      // Admitted: the realtime session is opened and confirmed before any audio.
      await realtime.waitFor("session.update", 15_000);
      expect(realtime.connections[0]?.authorization).toBe("Bearer vk-test");

      participant = await participantBrowser.newPage();
      await participant.goto(meeting.participantUrl);
      await participant.evaluate(() => (globalThis as unknown as { joined: Promise<void> }).joined);
      await until(
        () => participant.evaluate(() => (globalThis as unknown as { heard: { connected: boolean } }).heard.connected),
        "the participant's WebRTC connection",
      );

      // Nothing is played into the meeting before anyone speaks to the agent.
      expect(
        await participant.evaluate(() => (globalThis as unknown as { heard: { loudMs: number } }).heard.loudMs),
      ).toBe(0);
      // Speech not addressed to the agent: it reaches the API and is transcribed, but no response
      // is created and nothing is played into the meeting.
      const heardMs = () =>
        participant.evaluate(() => (globalThis as unknown as { heard: { loudMs: number } }).heard.loudMs);
      realtime.script(["What is the status of the release?"]);
      await participant.evaluate(() => (globalThis as unknown as { speak(): Promise<void> }).speak());
      await until(() => realtime.transcribed() >= 1, "the unaddressed utterance transcribed");
      // Every utterance of that recording is transcribed (a pause may split it) before going on.
      let settled = -1;
      await until(
        async () => {
          const n = realtime.transcribed();
          const done = n === settled;
          settled = n;
          if (!done) await new Promise((r) => setTimeout(r, 1500));
          return done;
        },
        "the unaddressed recording finished",
        20_000,
      );
      expect(realtime.eventTypes()).not.toContain("response.create");
      expect(await heardMs()).toBe(0);

      // The participant speaks again; the stand-in "recognises" it as addressed to the agent.
      realtime.script(["Hey Prism, what is the status of the release?"]);
      await participant.evaluate(() => (globalThis as unknown as { speak(): Promise<void> }).speak());
      await until(() => loudChunks(realtime) > 3, "the participant's speech at the realtime API");
      expect(realtime.events.every((e) => e.event.type === "session.update" || e.afterSessionUpdated)).toBe(true);
      await realtime.waitFor("response.create", 15_000);

      // The model's tone is played into the meeting and heard by the participant.
      await until(
        () => participant.evaluate(() => (globalThis as unknown as { heard: { loudMs: number } }).heard.loudMs > 200),
        "the agent's answer at the participant",
      );
      const heard = await participant.evaluate(() => (globalThis as unknown as { heard: { peakRms: number } }).heard);
      expect(heard.peakRms).toBeGreaterThan(1000);

      // While the call goes on, its usage so far is already in the runtime's usage.
      const sqlite = runtime.runtime.deps.database.sqlite;
      await until(async () => {
        const voice = (await runtime.json<RuntimeUsage>("GET", "/agents/usage?groupBy=source")).body.groups.find(
          (g) => g.key === "voice",
        );
        return (voice?.audioInputMinutes ?? 0) > 0 && (voice?.audioOutputMinutes ?? 0) > 0;
      }, "the call's usage written during the call");
      expect(sqlite.prepare("select ended_at, meeting_id from voice_session_usage").all()).toEqual([
        { ended_at: null, meeting_id: new URL(meeting.meetingUrl).pathname.slice(1) },
      ]);

      fake.respond = scripted([calls("leave_meeting", {}), text("Left.")]);
      await chat("You can leave now.");
      await until(() => meeting.left === 1, "the bot's click on Leave call");
      const left = toolResultsOf(fake.requests.at(-1)?.body ?? {})[0];
      expect(JSON.parse(left?.content ?? "{}")).toMatchObject({ state: "ended", reason: "left on request" });
      // The realtime session is closed with the call.
      await until(() => realtime.connections.length === 1, "one realtime connection");
    }, 90_000);

    it("posts a summary of the call to the asking thread, and records its usage in telemetry", async () => {
      const db = runtime.runtime.deps.database.db;
      let summary: { text: string; thread_id: string } | undefined;
      await until(async () => {
        summary = await db
          .selectFrom("message")
          .select(["text", "thread_id"])
          .where("source", "=", "meeting")
          .executeTakeFirst();
        return summary !== undefined;
      }, "the meeting summary");
      const threads = await runtime.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
      expect(summary?.thread_id).toBe(threads.body.items.find((t) => t.main)?.id);
      expect(summary?.text).toContain("left on request");
      expect(summary?.text).toMatch(/In the call for \d+ s/);
      expect(summary?.text).toContain("Said to the agent:\n- Hey Prism, what is the status of the release?");
      expect(summary?.text).toContain("The agent said:\n- The release is on track.");
      expect(summary?.text).toMatch(/answered 1 time\(s\)\. Audio: \d+\.\d\d min in/);

      const usage = (await runtime.json<RuntimeUsage>("GET", "/agents/usage?groupBy=source")).body;
      const session = runtime.runtime.deps.database.sqlite
        .prepare("select ended_at, end_reason, thread_id, responses from voice_session_usage")
        .get();
      expect(session).toEqual({
        ended_at: expect.any(String),
        end_reason: "left on request",
        thread_id: summary?.thread_id,
        responses: 1,
      });
      await runtime.close();
      closed = true;
      const voice = usage.groups.find((g) => g.key === "voice");
      // The chat turns that asked to join and to leave are there too.
      expect(usage.groups.find((g) => g.key === "web")?.modelCalls).toBeGreaterThanOrEqual(4);
      expect(voice).toMatchObject({ voiceSessions: 1, modelCalls: 0, unpriced: 1 });
      const ended = otlp.logRecords().find((r) => r.eventName === "meeting.ended");
      const attrs = attributesOf(ended?.attributes) as Record<string, number>;
      expect(attrs).toMatchObject({ "meeting.state": "ended", "meeting.admitted": true, "meeting.responses": 1 });
      // The participant spoke for about 3 s, and the whole call was streamed and transcribed.
      expect(attrs["realtime.input_audio_ms"]).toBeGreaterThan(2_000);
      expect(attrs["transcription.audio_ms"]).toBe(attrs["realtime.input_audio_ms"]);
      // The stand-in's answer is a 600 ms tone.
      expect(attrs["realtime.output_audio_ms"]).toBeGreaterThanOrEqual(550);
      expect(attrs["realtime.output_audio_ms"]).toBeLessThanOrEqual(650);
      // The usage holds the same minutes as the event (rounded to a thousandth of a minute).
      expect(voice?.audioInputMinutes).toBeCloseTo(Number(attrs["realtime.input_audio_ms"]) / 60_000, 2);
      expect(voice?.transcriptionMinutes).toBe(voice?.audioInputMinutes);
      expect(voice?.audioOutputMinutes).toBeCloseTo(Number(attrs["realtime.output_audio_ms"]) / 60_000, 2);
    }, 30_000);

    it("apologises aloud and leaves when the realtime connection is lost for good", async () => {
      const second = await startTestRuntime(fake, {
        env: {
          VOICE_API_KEY: "vk-test",
          VOICE_API_URL: realtime.url,
          MEETING_BOT_EMAIL: account.email,
          MEETING_BOT_PASSWORD: account.password,
        },
        runtimeOptions: { voice: { meetingHosts: [meeting.host], signInOrigins: [meeting.origin] } },
      });
      try {
        const threads = await second.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
        const thread = threads.body.items.find((t) => t.main)?.id as string;
        fake.respond = scripted([calls("join_meeting", { url: meeting.meetingUrl }), text("Joining.")]);
        await readSse(await second.request("POST", `/agents/threads/${thread}/messages`, { text: "Join again." }));
        await until(() => meeting.state() === "waiting", "the second request to join");
        const before = realtime.connections.length;
        const leftBefore = meeting.left;
        meeting.admit();
        await until(() => realtime.connections.length === before + 1, "the call's realtime session");
        const listener = await participantBrowser.newPage();
        await listener.goto(meeting.participantUrl);
        await listener.evaluate(() => (globalThis as unknown as { joined: Promise<void> }).joined);
        await until(
          () => listener.evaluate(() => (globalThis as unknown as { heard: { connected: boolean } }).heard.connected),
          "the listener's WebRTC connection",
        );

        // Dropped, reconnected once, dropped again: the call cannot go on.
        realtime.dropConnections();
        await until(() => realtime.connections.length === before + 2, "the one reconnect");
        await new Promise((r) => setTimeout(r, 300));
        realtime.dropConnections();

        // A fresh session speaks the apology into the meeting, then the bot leaves.
        await until(() => realtime.connections.length === before + 3, "the apology's session", 20_000);
        await until(
          () =>
            realtime.events.some(
              (e) =>
                e.connection === before + 2 &&
                e.event.type === "response.create" &&
                /apologi[sz]e/i.test(String((e.event.response as { instructions?: string })?.instructions)),
            ),
          "the apology's response.create",
        );
        await until(
          () => listener.evaluate(() => (globalThis as unknown as { heard: { loudMs: number } }).heard.loudMs > 200),
          "the apology at the listener",
        );
        await until(() => meeting.left === leftBefore + 1, "the bot's leave");
        fake.respond = scripted([calls("meeting_status", {}), text("Done.")]);
        await readSse(await second.request("POST", `/agents/threads/${thread}/messages`, { text: "Status?" }));
        const status = JSON.parse(toolResultsOf(fake.requests.at(-1)?.body ?? {})[0]?.content ?? "{}");
        expect(status).toMatchObject({ state: "ended" });
        expect(status.reason).toMatch(/^the voice connection failed: the realtime connection dropped again/);
        await listener.close();
        // The lost call is in the usage, ended with its reason, the apology's audio included.
        const ended = () =>
          second.runtime.deps.database.sqlite
            .prepare("select end_reason, output_audio_seconds from voice_session_usage where ended_at is not null")
            .get() as { end_reason: string; output_audio_seconds: number } | undefined;
        await until(() => ended() !== undefined, "the lost call's usage");
        const row = ended() as { end_reason: string; output_audio_seconds: number };
        expect(row.end_reason).toBe(status.reason);
        expect(row.output_audio_seconds).toBeGreaterThanOrEqual(0.55);
        const voice = (await second.json<RuntimeUsage>("GET", "/agents/usage?groupBy=source")).body.groups.find(
          (g) => g.key === "voice",
        );
        expect(voice).toMatchObject({ voiceSessions: 1 });
        expect(voice?.audioOutputMinutes).toBeGreaterThan(0);
      } finally {
        await second.close();
      }
    }, 60_000);

    it("stops the agent's answer when the participant speaks over it (barge-in)", async () => {
      // A long answer at the pace of speech, so there is time to speak over it.
      const slow = await startRealtimeStandIn({ toneMs: 8_000, deltaMs: 100, deltaIntervalMs: 100 });
      const third = await startTestRuntime(fake, {
        env: {
          VOICE_API_KEY: "vk-test",
          VOICE_API_URL: slow.url,
          MEETING_BOT_EMAIL: account.email,
          MEETING_BOT_PASSWORD: account.password,
        },
        runtimeOptions: { voice: { meetingHosts: [meeting.host], signInOrigins: [meeting.origin] } },
      });
      try {
        const threads = await third.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
        const thread = threads.body.items.find((t) => t.main)?.id as string;
        fake.respond = scripted([calls("join_meeting", { url: meeting.meetingUrl }), text("Joining.")]);
        await readSse(await third.request("POST", `/agents/threads/${thread}/messages`, { text: "Join." }));
        await until(() => meeting.state() === "waiting", "the request to join");
        meeting.admit();
        await slow.waitFor("session.update", 15_000);
        const listener = await participantBrowser.newPage();
        await listener.goto(meeting.participantUrl);
        await listener.evaluate(() => (globalThis as unknown as { joined: Promise<void> }).joined);
        await until(
          () => listener.evaluate(() => (globalThis as unknown as { heard: { connected: boolean } }).heard.connected),
          "the listener's WebRTC connection",
        );
        const speak = () => listener.evaluate(() => (globalThis as unknown as { speak(): Promise<void> }).speak());
        slow.script(["Hey Prism, what is the status of the release?", "Sorry, one more thing"]);
        await speak();
        await slow.waitFor("response.create", 15_000);
        await until(
          () => listener.evaluate(() => (globalThis as unknown as { heard: { loudMs: number } }).heard.loudMs > 200),
          "the answer at the listener",
        );
        // Speaking over the answer cancels it and cuts it where its audio got to.
        const over = speak();
        const cancel = await slow.waitFor("response.cancel", 15_000);
        const truncate = await slow.waitFor("conversation.item.truncate", 5_000);
        expect(cancel.event.type).toBe("response.cancel");
        expect(Number(truncate.event.audio_end_ms)).toBeGreaterThan(0);
        expect(Number(truncate.event.audio_end_ms)).toBeLessThan(8_000);
        // The answer stops reaching the listener long before its 8 s. (The stand-in streams at the
        // pace of speech here, so this shows the cancel, not the flush of a long queue.)
        await new Promise((r) => setTimeout(r, 1_000));
        const heard = () =>
          listener.evaluate(() => (globalThis as unknown as { heard: { loudMs: number } }).heard.loudMs);
        const after = await heard();
        await new Promise((r) => setTimeout(r, 1_500));
        expect((await heard()) - after).toBeLessThan(300);
        await over;
        await listener.close();
      } finally {
        await third.close();
        await slow.close();
      }
    }, 60_000);
  },
);
