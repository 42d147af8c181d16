import { type SlackStandIn, startSlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, waitFor } from "./support/runtime.ts";
import { type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

let fake: FakeModel;
let standIn: SlackStandIn | undefined;
let rt: SlackTestRuntime | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  vi.useRealTimers();
  await rt?.close();
  await standIn?.close();
  rt = undefined;
  standIn = undefined;
});

const errorLines = (records: Array<Record<string, unknown>>) =>
  records.filter((r) => r.level === 50 && String(r.msg).startsWith("team chat disabled"));

describe("team chat boot", () => {
  it("connects when the bot's app id (auth.test -> bots.info) and the socket's hello agree with CHAT_EXPECTED_APP_ID", async () => {
    standIn = await startSlackStandIn({ botAppId: "A0GOOD" });
    const { logger, records } = capturingLogger();
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_EXPECTED_APP_ID: "A0GOOD" }, logger });
    const status = await settled(rt);
    expect(status).toMatchObject({ state: "connected", appId: "A0GOOD", botUserId: standIn.botUserId });
    expect(standIn.api.callsOf("auth.test")[0]?.token).toBe("bot");
    expect(standIn.api.callsOf("bots.info")[0]?.params.bot).toBe(standIn.botId);
    expect(standIn.api.callsOf("apps.connections.open")[0]?.token).toBe("app");
    expect((await rt.json("GET", "/health")).body).toMatchObject({ status: "ok", teamChat: "connected" });
    // No owner yet: a one-time pairing code is logged, and the state says one is pending.
    const pairing = records.find((r) => typeof r.pairingCode === "string");
    expect(String(pairing?.msg)).toContain(String(pairing?.pairingCode));
    expect((await rt.json("GET", "/agents/team-chat")).body).toMatchObject({
      state: "connected",
      owner: { id: null, pairingPending: true },
    });
    // Tokens appear in no log record.
    const logged = JSON.stringify(records);
    expect(logged).not.toContain(standIn.botToken);
    expect(logged).not.toContain(standIn.appToken);
  });

  it("refuses team chat when the bot token belongs to another app, and keeps serving", async () => {
    standIn = await startSlackStandIn({ botAppId: "A0OTHER" });
    const { logger, records } = capturingLogger();
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_EXPECTED_APP_ID: "A0GOOD" }, logger });
    expect(await settled(rt)).toMatchObject({ state: "disabled", detail: "app id mismatch" });
    const lines = errorLines(records);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.msg).toMatch(/A0GOOD.*A0OTHER/);
    expect(standIn.api.callsOf("apps.connections.open")).toHaveLength(0);
    expect((await rt.json("GET", "/health")).body).toMatchObject({ teamChat: "disabled: app id mismatch" });
    expect((await rt.json("GET", "/agents/profile")).status).toBe(200);
  });

  it("refuses team chat when the app token's socket says another app in hello", async () => {
    standIn = await startSlackStandIn({ botAppId: "A0GOOD", socketAppId: "A0SOCKET" });
    const { logger, records } = capturingLogger();
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_EXPECTED_APP_ID: "A0GOOD" }, logger });
    await waitFor(() => rt?.slack.status().state === "disabled" || undefined);
    const lines = errorLines(records);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.msg).toMatch(/A0GOOD.*A0SOCKET/);
    // The socket is closed and stays closed: no reconnect loop.
    await waitFor(() => !standIn?.connected || undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(standIn.connections).toBe(1);
    expect((await rt.json("GET", "/health")).body).toMatchObject({ teamChat: "disabled: app id mismatch" });
  });

  it("reports an invalid bot token (invalid_auth) the same way, without retrying in a loop", async () => {
    standIn = await startSlackStandIn();
    standIn.botToken = "xoxb-not-the-right-one";
    const { logger, records } = capturingLogger();
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_BOT_TOKEN: "xoxb-revoked-token" }, logger });
    expect(await settled(rt)).toMatchObject({ state: "disabled", detail: "invalid_auth" });
    await new Promise((r) => setTimeout(r, 400));
    expect(standIn.api.callsOf("auth.test")).toHaveLength(1);
    expect(errorLines(records)).toHaveLength(1);
    expect(JSON.stringify(records)).not.toContain("xoxb-revoked-token");
    expect((await rt.json("GET", "/health")).body).toMatchObject({ status: "ok", teamChat: "disabled: invalid_auth" });
  });

  it("refuses an invalid app token (apps.connections.open invalid_auth)", async () => {
    standIn = await startSlackStandIn();
    const { logger, records } = capturingLogger();
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_APP_TOKEN: "xapp-wrong" }, logger });
    expect(await settled(rt)).toMatchObject({ state: "disabled", detail: "invalid_auth" });
    expect(errorLines(records)[0]?.msg).toContain("CHAT_APP_TOKEN");
    expect(JSON.stringify(records)).not.toContain("xapp-wrong");
  });

  it("keeps retrying while Slack is unreachable, reporting it, and connects once it answers", async () => {
    standIn = await startSlackStandIn();
    standIn.api.down = true;
    rt = await startSlackRuntime(fake, standIn);
    await waitFor(() => (rt?.slack.status().detail ?? "").startsWith("Slack unreachable") || undefined);
    expect((await rt.json("GET", "/health")).body).toMatchObject({ status: "ok", teamChat: "connecting" });
    standIn.api.down = false;
    expect(await settled(rt)).toMatchObject({ state: "connected" });
  });

  it("tries again when apps.connections.open cannot be reached, instead of disabling team chat", async () => {
    standIn = await startSlackStandIn();
    // The socket client retries opening a connection (1 s, then 1.3 s later); a failure that outlasts
    // its retries boots the adapter again (30 s later) rather than disabling it.
    standIn.api.unavailableNext("apps.connections.open", 2);
    rt = await startSlackRuntime(fake, standIn);
    expect(await settled(rt, 20_000)).toMatchObject({ state: "connected" });
    expect(standIn.api.callsOf("apps.connections.open")).toHaveLength(3);
  });

  it("reconnects on a warning disconnect frame", async () => {
    standIn = await startSlackStandIn();
    rt = await startSlackRuntime(fake, standIn);
    await settled(rt);
    standIn.disconnect("warning");
    await waitFor(() => (standIn?.connections === 2 && standIn.connected) || undefined);
    await waitFor(() => rt?.slack.status().state === "connected" || undefined);
  });

  it("stops on link_disabled (Socket Mode turned off for the app) instead of reconnecting in a loop", async () => {
    standIn = await startSlackStandIn();
    // A 1 s pong timeout makes the client's reconnect delay 1 s: a reconnect would show within 1.5 s.
    rt = await startSlackRuntime(fake, standIn, { slack: { clientPingTimeoutMs: 1000 } });
    await settled(rt);
    standIn.disconnect("link_disabled");
    await waitFor(() => rt?.slack.status().state === "disabled" || undefined);
    await waitFor(() => !standIn?.connected || undefined);
    await new Promise((r) => setTimeout(r, 1500));
    expect(standIn.connections).toBe(1);
    expect((await rt.json("GET", "/health")).body).toMatchObject({
      teamChat: expect.stringMatching(/^disabled: .*link_disabled/),
    });
  });

  it("reconnects when no server ping arrives for 30 s (fake timers), and not before", async () => {
    standIn = await startSlackStandIn({ pingIntervalMs: 0 });
    rt = await startSlackRuntime(fake, standIn);
    await settled(rt);
    expect(standIn.connections).toBe(1);
    const realSetTimeout = globalThis.setTimeout;
    const realSleep = (ms: number) => new Promise((r) => realSetTimeout(r, ms));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    // One ping under fake timers starts the client's 30 s watchdog; then the server goes quiet.
    standIn.ping();
    standIn.stopPinging();
    await realSleep(50);
    const advance = async (seconds: number) => {
      for (let i = 0; i < seconds; i++) {
        await vi.advanceTimersByTimeAsync(1000);
        await realSleep(5);
      }
    };
    await advance(29);
    expect(standIn.connections).toBe(1);
    expect(standIn.connected).toBe(true);
    await advance(2);
    // The client closes the quiet connection, waits its reconnect delay, and connects again; the
    // close handshake is real I/O, so fake time moves on slowly until the new connection is up.
    for (let i = 0; i < 60 && standIn.connections < 2; i++) {
      await advance(1);
      await realSleep(25);
    }
    vi.useRealTimers();
    await waitFor(() => (standIn?.connections === 2 && standIn.connected) || undefined);
    await waitFor(() => rt?.slack.status().state === "connected" || undefined);
  });
});
