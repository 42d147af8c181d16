import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireChromium } from "@agentplane/testkit/browser";
import { type MeetingStandIn, startMeetingStandIn } from "@agentplane/testkit/meeting";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MeetingBrowser, type MeetingBrowserOptions } from "../../src/voice/meeting-session.ts";
import { MeetingBusyError } from "../../src/voice/types.ts";

const chromium = requireChromium();
const account = { email: "bot@example.com", password: "s3cret-pw" };

const until = async (check: () => boolean, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The pids of the processes started with this data dir's meeting profile (the bot's Chromium). */
const profileProcesses = (dataDir: string): number[] =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(join(dataDir, "meeting-profile"));
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);

// One browser (the persistent profile) for the whole file; scenarios run in order.
describe.skipIf(!chromium.available)(`meeting browser and admission${chromium.reason}`, () => {
  let stand: MeetingStandIn;
  let meetings: MeetingBrowser;
  let dataDir: string;
  const ended: string[] = [];
  const options = (over: Partial<MeetingBrowserOptions> = {}): MeetingBrowserOptions => ({
    browserPath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    sandboxed: process.getuid?.() !== 0,
    dataDir,
    account,
    signInOrigins: [stand.origin],
    admissionTimeoutMs: 5_000,
    meetingCapMs: 60_000,
    logger: pino({ level: "silent" }),
    pollMs: 100,
    onEnded: (s) => ended.push(s.state),
    ...over,
  });

  beforeAll(async () => {
    stand = await startMeetingStandIn(account);
    dataDir = mkdtempSync(join(tmpdir(), "agent-meeting-"));
    meetings = new MeetingBrowser(options());
  });
  afterAll(async () => {
    await meetings?.close();
    await stand?.close();
  });
  const join_ = () => meetings.join({ url: new URL(stand.meetingUrl), name: "Prism", threadId: "t" });

  it("signs in, asks to join under its name, waits, is admitted, answers busy, leaves cleanly", async () => {
    const first = await join_();
    expect(first.state).toBe("asked");
    expect(stand.signIns).toBe(1);
    expect(stand.asks).toEqual(["Prism"]);
    await until(() => meetings.status()?.state === "waiting");
    await expect(join_()).rejects.toBeInstanceOf(MeetingBusyError);
    stand.admit();
    await until(() => meetings.status()?.state === "in-call");
    expect(meetings.status()?.admittedAt).toBeDefined();
    const left = await meetings.leave();
    expect(left).toMatchObject({ state: "ended", reason: "left on request" });
    expect(stand.left).toBe(1);
    expect(ended).toEqual(["ended"]);
    // The call is over: no Chromium holds the signed-in profile any more.
    expect(profileProcesses(dataDir)).toEqual([]);
  });

  it("reuses the signed-in profile on the next join, and reports a denial", async () => {
    stand.deny();
    await join_();
    // The browser was opened again for this join.
    expect(profileProcesses(dataDir).length).toBeGreaterThan(0);
    const status = await meetings.settled();
    expect(status).toMatchObject({ state: "denied", reason: "the request to join was denied" });
    expect(stand.signIns).toBe(1);
    expect(stand.asks).toHaveLength(2);
    expect(profileProcesses(dataDir)).toEqual([]);
  });

  it("gives up after the admission timeout, counted from the click on Ask to join", async () => {
    await meetings.close();
    meetings = new MeetingBrowser(options({ admissionTimeoutMs: 1_500 }));
    const started = Date.now();
    // The stand-in keeps the request waiting: nobody admits it.
    const askedPromise = join_();
    const asked = await askedPromise;
    expect(asked.state).toBe("asked");
    const status = await meetings.settled();
    expect(status?.state).toBe("admission-timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(stand.signIns).toBe(1);
    expect(profileProcesses(dataDir)).toEqual([]);
  });

  it("ends the call at the meeting cap, counted from admission, and when the meeting ends", async () => {
    await meetings.close();
    meetings = new MeetingBrowser(options({ meetingCapMs: 1_500 }));
    await join_();
    await until(() => stand.asks.length === 4 && stand.state() === "waiting");
    stand.admit();
    await until(() => meetings.status()?.state === "in-call");
    const status = await meetings.settled();
    expect(status).toMatchObject({ state: "ended", reason: "the meeting cap (MEETING_TIMEOUT_MINUTES) was reached" });
    const admitted = Date.parse(status?.admittedAt as string);
    expect(Date.parse(status?.endedAt as string) - admitted).toBeGreaterThanOrEqual(1_400);
    expect(stand.left).toBe(2);
    expect(profileProcesses(dataDir)).toEqual([]);

    await meetings.close();
    meetings = new MeetingBrowser(options());
    await join_();
    await until(() => stand.asks.length === 5 && stand.state() === "waiting");
    stand.admit();
    await until(() => meetings.status()?.state === "in-call");
    stand.end();
    expect(await meetings.settled()).toMatchObject({ state: "ended", reason: "the meeting ended" });
    expect(profileProcesses(dataDir)).toEqual([]);
  });
});

describe.skipIf(!chromium.available)(`meeting sign-in origin${chromium.reason}`, () => {
  it("never types the account into a sign-in form of an unexpected origin, and names that origin", async () => {
    const stand = await startMeetingStandIn(account);
    // The production default: only https://accounts.google.com gets the account.
    const dataDir = mkdtempSync(join(tmpdir(), "agent-meeting-"));
    const meetings = new MeetingBrowser({
      browserPath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      sandboxed: process.getuid?.() !== 0,
      dataDir,
      account,
      admissionTimeoutMs: 5_000,
      meetingCapMs: 60_000,
      logger: pino({ level: "silent" }),
      pollMs: 100,
    });
    try {
      await meetings.join({ url: new URL(stand.meetingUrl), name: "Prism", threadId: "t" });
      const status = await meetings.settled();
      expect(status?.state).toBe("ended");
      expect(status?.reason).toContain(`a sign-in form was shown by ${stand.origin}`);
      expect(status?.reason).toContain("https://accounts.google.com");
      expect(status?.reason).not.toContain(account.password);
      expect(stand.signInPosts).toBe(0);
      expect(stand.asks).toEqual([]);
      // An attempt that failed closes the browser too.
      expect(profileProcesses(dataDir)).toEqual([]);
    } finally {
      await meetings.close();
      await stand.close();
    }
  });
});
