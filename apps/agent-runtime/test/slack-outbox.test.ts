import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DELIVERY_GIVE_UP_MS } from "../src/chat/slack/outbox.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, waitFor } from "./support/runtime.ts";
import { freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const HOUR = 3_600_000;

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia" });
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await standIn.close();
});

async function connected() {
  const { logger, records } = capturingLogger();
  rt = await startSlackRuntime(fake, standIn, { env: { CHAT_OWNER_ID: OWNER }, logger });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
  return { rt, records };
}

const postsTo = (channel: string) =>
  standIn.api.callsOf("chat.postMessage").filter((c) => c.params.channel === channel).length;

async function stored(rt: SlackTestRuntime) {
  return rt.runtime.deps.database.db.selectFrom("team_chat_delivery").selectAll().execute();
}

describe("a delivery Slack keeps refusing", () => {
  it("is given up at once when no retry can succeed (the channel is gone), not retried every hour", async () => {
    const { rt, records } = await connected();
    expect(await rt.slack.outbox.send("C0GONE", null, "the nightly report")).toBe(false);
    // A week of retry passes, an hour apart.
    for (let hours = 1; hours <= 7 * 24; hours += 1)
      await rt.slack.outbox.retryDue(new Date(Date.now() + hours * HOUR));
    expect(postsTo("C0GONE")).toBe(1);
    expect(await stored(rt)).toMatchObject([{ status: "failed", attempts: 1, last_error: "channel_not_found" }]);
    const given = records.find((r) => r.msg === "team-chat delivery given up: Slack refused it for good, or for a day");
    expect(given).toMatchObject({ channel: "C0GONE", error: "channel_not_found" });
  });

  it("is retried for a day when Slack's answer may change, then given up", async () => {
    const { rt } = await connected();
    const dm = standIn.workspace.dm(OWNER).id;
    standIn.api.failNext("chat.postMessage", "internal_error", 1000);
    expect(await rt.slack.outbox.send(dm, null, "the nightly report")).toBe(false);
    await rt.slack.outbox.retryDue(new Date(Date.now() + HOUR));
    expect(await stored(rt)).toMatchObject([{ status: "pending", attempts: 2 }]);
    const later = Date.now() + DELIVERY_GIVE_UP_MS + HOUR;
    for (let hours = 0; hours < 48; hours += 1) await rt.slack.outbox.retryDue(new Date(later + hours * HOUR));
    expect(postsTo(dm)).toBe(3);
    expect(await stored(rt)).toMatchObject([{ status: "failed", attempts: 3, last_error: "internal_error" }]);
  });
});

describe("stopping the runtime with turns waiting", () => {
  it("waits for the turn that runs, not for every message queued behind it", async () => {
    const { rt: runtime, records } = await connected();
    fake.respond = () => ({ content: [{ type: "text", text: "done" }], delayMs: 1500 });
    for (const text of ["one", "two", "three", "four"]) standIn.say(OWNER, text);
    await waitFor(() => (fake.requests.length === 1 ? true : undefined));
    const started = Date.now();
    rt = undefined;
    await runtime.close();
    const took = Date.now() - started;
    // Before, the three queued turns ran one after another first: some 6 s, past the 10 s a
    // stopping process is given with tracing and the database still to close.
    expect(took).toBeLessThan(3000);
    expect(fake.requests).toHaveLength(1);
    expect(records.filter((r) => r.msg === "team chat dropped a turn: the runtime is stopping")).toHaveLength(3);
  }, 20_000);
});
