import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { BrowserContext, Page } from "playwright-core";
import { newId } from "../ids.ts";
import { browserLaunchOptions } from "./availability.ts";
import type { CallRecord, MeetingCall } from "./call.ts";
import { PAGE } from "./page-texts.ts";
import {
  FINAL_STATES,
  MeetingBusyError,
  type MeetingController,
  type MeetingState,
  type MeetingStatus,
} from "./types.ts";

/** Where the production meeting service signs its accounts in: the only page given the password. */
export const SIGN_IN_ORIGINS: readonly string[] = ["https://accounts.google.com"];

export interface MeetingBrowserOptions {
  browserPath: string;
  /** Under Chromium's sandbox (as the start's probe found it can run: `probeVoice`). */
  sandboxed: boolean;
  dataDir: string;
  account: { email: string; password: string | undefined };
  /** Origins whose sign-in form gets the account (default SIGN_IN_ORIGINS; tests name a stand-in). */
  signInOrigins?: readonly string[];
  admissionTimeoutMs: number;
  meetingCapMs: number;
  logger: Logger;
  /** How often the page is looked at. */
  pollMs?: number;
  /** Called once an attempt ends (the summary hook), with the call's record when it had audio. */
  onEnded?(status: MeetingStatus, record?: CallRecord, threadId?: string): void;
  /** Called at admission and every `progressMs` in the call with the record so far (the usage). */
  onProgress?(status: MeetingStatus, record: CallRecord, threadId: string): void;
  /** How often `onProgress` is called in the call (default 10 s). */
  progressMs?: number;
  /** The audio side of each attempt (none: the browser joins without audio). */
  call?: () => MeetingCall;
}

class Ended extends Error {}

const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

/**
 * Joins one meeting at a time in headless Chromium with a persistent profile under
 * `<data dir>/meeting-profile`, so the sign-in happens once. The browser runs only while an
 * attempt does: however a call ends, it is closed (it holds the signed-in account), and the next
 * join opens it again on the same profile. The page is read only through the table in
 * page-texts.ts.
 */
export class MeetingBrowser implements MeetingController {
  readonly #o: MeetingBrowserOptions;
  #status: MeetingStatus | undefined;
  #context: BrowserContext | undefined;
  #run: Promise<void> | undefined;
  #leaveRequested: string | undefined;

  constructor(options: MeetingBrowserOptions) {
    this.#o = options;
  }

  status(): MeetingStatus | undefined {
    return this.#status ? { ...this.#status } : undefined;
  }

  /** Resolves once the request to join was sent (or the attempt already ended). */
  async join(request: { url: URL; name: string; threadId: string }): Promise<MeetingStatus> {
    if (this.#status && !FINAL_STATES.has(this.#status.state)) throw new MeetingBusyError(this.#status);
    this.#leaveRequested = undefined;
    this.#status = {
      id: newId("mtg"),
      url: request.url.href,
      name: request.name,
      state: "prejoin",
      startedAt: new Date().toISOString(),
    };
    let asked: () => void = () => {};
    const askedOrEnded = new Promise<void>((resolve) => {
      asked = resolve;
    });
    // An attempt that has just ended may still be closing its browser: this one starts after it.
    const previous = (this.#run ?? Promise.resolve()).catch(() => {});
    this.#run = previous.then(() => this.#attempt(request.url, request.name, asked, request.threadId)).finally(asked);
    await askedOrEnded;
    return this.status() as MeetingStatus;
  }

  async leave(): Promise<MeetingStatus | undefined> {
    if (!this.#status) return undefined;
    if (!FINAL_STATES.has(this.#status.state)) {
      this.#leaveRequested = "left on request";
      await this.#run;
    }
    return this.status();
  }

  /** Resolves when the current attempt has ended and its browser is closed. */
  async settled(): Promise<MeetingStatus | undefined> {
    await this.#run;
    return this.status();
  }

  async close(): Promise<void> {
    if (this.#status && !FINAL_STATES.has(this.#status.state)) this.#leaveRequested = "the runtime is shutting down";
    await this.#run;
    await this.#closeBrowser();
  }

  #set(state: MeetingState, reason?: string): void {
    const status = this.#status as MeetingStatus;
    status.state = state;
    if (state === "in-call") status.admittedAt = new Date().toISOString();
    if (FINAL_STATES.has(state)) {
      status.endedAt = new Date().toISOString();
      if (reason) status.reason = reason;
    }
  }

  async #attempt(url: URL, name: string, asked: () => void, threadId: string): Promise<void> {
    let page: Page | undefined;
    const call = this.#o.call?.();
    let record: CallRecord | undefined;
    try {
      page = await (await this.#browser()).newPage();
      await call?.prepare(page);
      await page.goto(url.href);
      await this.#signInIfAsked(page);
      this.#set("prejoin");
      const nameField = page.getByRole("textbox", { name: PAGE.prejoin.name });
      if (await nameField.isVisible()) await nameField.fill(name);
      await page.getByRole("button", { name: PAGE.prejoin.ask }).click({ timeout: 15_000 });
      // The admission timeout counts from this click.
      const askedAt = Date.now();
      this.#set("asked");
      asked();
      await this.#awaitAdmission(page, askedAt);
      const admittedAt = Date.now();
      // Written before the audio starts: a call whose start fails is still on record.
      if (call) this.#progress(call, threadId);
      await call?.start(page);
      await this.#stayInCall(page, admittedAt, call, threadId);
    } catch (err) {
      if (!(err instanceof Ended)) {
        const message = err instanceof Error ? err.message.split("\n")[0] : String(err);
        this.#o.logger.warn({ err: message }, "meeting attempt failed");
        if (this.#status && !FINAL_STATES.has(this.#status.state))
          this.#set("ended", `the meeting page failed: ${message}`);
      }
    } finally {
      // A stop that fails still leaves what the call had so far.
      if (call) record = await call.stop().catch(() => call.snapshot());
      if (page) await this.#leaveAndClose(page);
      await this.#closeBrowser();
      this.#o.onEnded?.(this.status() as MeetingStatus, record, threadId);
    }
  }

  async #browser(): Promise<BrowserContext> {
    if (this.#context) return this.#context;
    const profile = join(this.#o.dataDir, "meeting-profile");
    mkdirSync(profile, { recursive: true });
    const { chromium } = await import("playwright-core");
    const launch = browserLaunchOptions(this.#o.browserPath, this.#o.sandboxed);
    const context = await chromium.launchPersistentContext(profile, {
      ...launch,
      args: [...launch.args, "--use-fake-ui-for-media-stream", "--autoplay-policy=no-user-gesture-required"],
    });
    // A browser that went away by itself (a crash) is launched again on the next join.
    context.on("close", () => {
      if (this.#context === context) this.#context = undefined;
    });
    this.#context = context;
    return context;
  }

  /** Closes the browser, if it runs: the profile's cookies are written, no process is left. */
  async #closeBrowser(): Promise<void> {
    const context = this.#context;
    this.#context = undefined;
    await context?.close().catch((err: unknown) => {
      this.#o.logger.warn({ err: (err as Error).message }, "the meeting browser did not close");
    });
  }

  async #signInIfAsked(page: Page): Promise<void> {
    const email = page.getByRole("textbox", { name: PAGE.signIn.email });
    if (!(await email.isVisible())) return;
    this.#set("signing-in");
    const { account } = this.#o;
    if (!account.password)
      this.#end("ended", "the meeting service asks to sign in and MEETING_BOT_PASSWORD is not set");
    // The account goes only to the identity provider: a sign-in form elsewhere (a look-alike page,
    // a redirect the meeting link led to) gets neither the email nor the password.
    const origin = originOf(page.url());
    const expected = this.#o.signInOrigins ?? SIGN_IN_ORIGINS;
    if (!expected.includes(origin)) {
      this.#end(
        "ended",
        `a sign-in form was shown by ${origin}, not by ${expected.join(" or ")}: the meeting account's credentials were not entered`,
      );
    }
    await email.fill(account.email);
    await page.getByLabel(PAGE.signIn.password).fill(account.password as string);
    await Promise.all([page.waitForLoadState(), page.getByRole("button", { name: PAGE.signIn.submit }).click()]);
    const text = await visibleText(page);
    for (const challenge of PAGE.challenges) if (challenge.text.test(text)) this.#end("ended", challenge.reason);
  }

  async #awaitAdmission(page: Page, askedAt: number): Promise<void> {
    const leave = page.getByRole("button", { name: PAGE.inCall.leave });
    for (;;) {
      this.#checkLeave();
      const state = await this.#read(page);
      if (state === "denied") this.#end("denied", "the request to join was denied");
      if (state === "ended") this.#end("ended", "the meeting ended before the agent was admitted");
      if (await leave.isVisible()) {
        this.#set("in-call");
        return;
      }
      if (state === "waiting" && this.#status?.state === "asked") this.#set("waiting");
      if (Date.now() - askedAt >= this.#o.admissionTimeoutMs) {
        this.#end(
          "admission-timeout",
          `nobody admitted the agent within ${Math.round(this.#o.admissionTimeoutMs / 1000)} s`,
        );
      }
      await page.waitForTimeout(this.#o.pollMs ?? 200);
    }
  }

  async #stayInCall(page: Page, admittedAt: number, call: MeetingCall | undefined, threadId: string): Promise<void> {
    let progressAt = Date.now();
    for (;;) {
      this.#checkLeave();
      if (call && Date.now() - progressAt >= (this.#o.progressMs ?? 10_000)) {
        progressAt = Date.now();
        this.#progress(call, threadId);
      }
      if (call?.failure) {
        await call.apologize();
        this.#end("ended", `the voice connection failed: ${call.failure}`);
      }
      const state = await this.#read(page);
      if (state === "ended" || state === "denied") this.#end("ended", "the meeting ended");
      if (Date.now() - admittedAt >= this.#o.meetingCapMs) {
        this.#end("ended", "the meeting cap (MEETING_TIMEOUT_MINUTES) was reached");
      }
      await page.waitForTimeout(this.#o.pollMs ?? 200);
    }
  }

  #progress(call: MeetingCall, threadId: string): void {
    try {
      this.#o.onProgress?.(this.status() as MeetingStatus, call.snapshot(), threadId);
    } catch (err) {
      this.#o.logger.warn({ err: (err as Error).message }, "the call's usage so far was not written");
    }
  }

  /** The first state of the table whose text is on the page. */
  async #read(page: Page): Promise<string | undefined> {
    const text = await visibleText(page);
    return PAGE.states.find((s) => s.text.test(text))?.state;
  }

  #checkLeave(): void {
    if (this.#leaveRequested) this.#end("ended", this.#leaveRequested);
  }

  #end(state: MeetingState, reason: string): never {
    this.#set(state, reason);
    throw new Ended(reason);
  }

  async #leaveAndClose(page: Page): Promise<void> {
    try {
      const leave = page.getByRole("button", { name: PAGE.inCall.leave });
      if (await leave.isVisible()) await leave.click({ timeout: 5_000 });
      // Let the leave reach the service before the page goes.
      await page.waitForTimeout(300);
    } catch {
      // The page may already be gone; closing it below is what matters.
    }
    await page.close().catch(() => {});
  }
}

/** What a participant sees: innerText leaves out scripts and hidden nodes, which textContent keeps. */
function visibleText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: the visible text is the point (see above)
  return page.locator("body").innerText();
}
