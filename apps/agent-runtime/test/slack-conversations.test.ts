import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { WORKING_STATUS } from "../src/chat/slack/history.ts";
import { MAX_WRONG_PAIRING_CODES } from "../src/chat/slack/inbound.ts";
import { pairingCode } from "../src/chat/store.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const STRANGER = "U0STRANGER";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia", [STRANGER]: "sam" });
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await standIn.close();
});

async function personal(env: Record<string, string> = { CHAT_OWNER_ID: OWNER }, logger = capturingLogger().logger) {
  rt = await startSlackRuntime(fake, standIn, { env, logger });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
  return rt;
}

const dmOf = (user: string) => standIn.workspace.dm(user).id;
const botTexts = (channel: string) => answers(standIn, channel).map((m) => m.text);
const repliesIn = (channel: string, n: number) =>
  waitFor(() => (answers(standIn, channel).length >= n ? answers(standIn, channel) : undefined));
/** The text of every message the model was sent in its n-th request. */
const modelSaw = (n: number) => JSON.stringify(fake.requests[n]?.body.messages ?? null);

describe("personal mode", () => {
  it("acks the owner's DM within 3 s, before the model answers, and answers in the DM", async () => {
    await personal();
    // The model takes 1.5 s: an ack sent after the model ran would come later than that.
    fake.respond = (body) => ({ content: [{ type: "text", text: `echo: ${lastUserText(body)}` }], delayMs: 1500 });
    const sent = standIn.say(OWNER, "hello agent");
    const acked = await waitFor(() => standIn.envelopes.get(sent.envelopeId)?.ackedAt);
    expect(answers(standIn, dmOf(OWNER))).toHaveLength(0);
    const [reply] = await repliesIn(dmOf(OWNER), 1);
    expect(reply?.text).toBe("echo: hello agent");
    expect(acked - (standIn.envelopes.get(sent.envelopeId)?.sentAt as number)).toBeLessThan(1500);
    // While the model worked, a status message stood where the answer goes; the answer replaced it
    // in place (chat.update of that message), so the DM holds one message from the bot.
    const [status] = standIn.api.callsOf("chat.postMessage");
    expect(status?.params).toMatchObject({ channel: dmOf(OWNER), text: WORKING_STATUS });
    expect(status?.params.thread_ts).toBeUndefined();
    const updates = standIn.api.callsOf("chat.update");
    expect((updates.at(-1)?.at ?? 0) - (status?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(updates.at(-1)?.params).toMatchObject({ ts: reply?.ts, text: "echo: hello agent" });
    expect(standIn.api.callsOf("chat.postMessage")).toHaveLength(1);
    expect(standIn.botMessages(dmOf(OWNER))).toHaveLength(1);
    // The conversation is a team-chat thread: not among the web threads.
    const threads = await rt?.json<{ items: Array<{ id: string }> }>("GET", "/agents/threads");
    expect(threads?.body.items).toHaveLength(1);
    const kinds = await rt?.runtime.deps.database.db.selectFrom("thread").select(["kind", "external_id"]).execute();
    expect(kinds).toContainEqual({ kind: "team-chat", external_id: dmOf(OWNER) });
  });

  it("answers a DM thread reply in that thread", async () => {
    await personal();
    const root = standIn.say(OWNER, "first");
    await repliesIn(dmOf(OWNER), 1);
    standIn.say(OWNER, "in the thread", { threadTs: root.ts });
    const replies = await repliesIn(dmOf(OWNER), 2);
    expect(replies[1]?.thread_ts).toBe(root.ts);
    // The thread (its root, then the reply) is what the model was given.
    expect(replies[1]?.text).toBe("echo: first\nin the thread");
  });

  it("refuses other people politely and runs no turn for them; ignores bots and its own messages", async () => {
    await personal();
    standIn.say(STRANGER, "do something for me");
    const [refusal] = await repliesIn(dmOf(STRANGER), 1);
    expect(refusal?.text).toContain(`<@${OWNER}>`);
    standIn.sendEvent({
      type: "message",
      channel: dmOf(OWNER),
      channel_type: "im",
      user: "U0OTHERBOT",
      bot_id: "B0OTHER",
      text: "beep",
      ts: "1700000100.000100",
    });
    standIn.sendEvent({
      type: "message",
      channel: dmOf(OWNER),
      channel_type: "im",
      user: standIn.botUserId,
      bot_id: standIn.botId,
      text: "me",
      ts: "1700000101.000100",
    });
    standIn.sendEnvelope("slash_commands", { command: "/unknown" });
    standIn.sendEnvelope("some_future_type", { anything: true });
    await waitFor(() => [...standIn.envelopes.values()].every((e) => e.ackedAt !== undefined) || undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests).toHaveLength(0);
    expect(answers(standIn, dmOf(OWNER))).toHaveLength(0);
  });

  it("drops malformed event bodies and keeps answering", async () => {
    await personal();
    const message = { type: "message", channel: dmOf(OWNER), channel_type: "im", user: OWNER, text: "hi" };
    for (const body of [
      { event_id: { not: "a string" }, event: { ...message, ts: "1700000200.000100" } },
      { event_id: 7, event: { ...message, ts: "1700000201.000100" } },
      { event_id: "Ev0BAD00003", event: "not an event" },
      { event_id: "Ev0BAD00004", event: { ...message, type: 5 } },
    ])
      standIn.sendEnvelope("events_api", body);
    await waitFor(() => [...standIn.envelopes.values()].every((e) => e.ackedAt !== undefined) || undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests).toHaveLength(0);
    standIn.say(OWNER, "still there?");
    const [answer] = await repliesIn(dmOf(OWNER), 1);
    expect(answer?.text).toBe("echo: still there?");
  });

  it("pairs the first person who DMs the one-time code, and the channels view can reset it", async () => {
    const db = (await personal({})).runtime.deps.database.db;
    const code = await waitFor(async () => (await pairingCode(db)) ?? undefined);
    standIn.say(STRANGER, "0000-0000");
    expect((await repliesIn(dmOf(STRANGER), 1))[0]?.text).toContain("not paired");
    standIn.say(OWNER, code);
    expect((await repliesIn(dmOf(OWNER), 1))[0]?.text).toContain("Paired");
    expect((await rt?.json("GET", "/agents/team-chat"))?.body).toMatchObject({
      owner: { id: OWNER, source: "paired", pairingPending: false },
    });
    standIn.say(OWNER, "now a real question");
    expect((await repliesIn(dmOf(OWNER), 2))[1]?.text).toBe("echo: now a real question");
    const reset = await rt?.json("DELETE", "/agents/team-chat/owner");
    expect(reset?.body).toMatchObject({ owner: { id: null, pairingPending: true } });
    expect(await pairingCode(db)).not.toBe(code);
  });

  it("retires the pairing code after a few wrong tries, so it cannot be guessed", async () => {
    const db = (await personal({})).runtime.deps.database.db;
    const code = await waitFor(async () => (await pairingCode(db)) ?? undefined);
    for (let i = 0; i < MAX_WRONG_PAIRING_CODES; i++) standIn.say(STRANGER, `${String(i).padStart(4, "0")}-0000`);
    await repliesIn(dmOf(STRANGER), MAX_WRONG_PAIRING_CODES);
    const next = await waitFor(async () => {
      const current = await pairingCode(db);
      return current && current !== code ? current : undefined;
    });
    // The retired code no longer pairs; the new one (logged for the operator) does.
    standIn.say(OWNER, code);
    expect((await repliesIn(dmOf(OWNER), 1))[0]?.text).toContain("not paired");
    standIn.say(OWNER, next);
    expect((await repliesIn(dmOf(OWNER), 2))[1]?.text).toContain("Paired");
  });

  it("re-reads the conversation from Slack before each turn: edits and deletions are what the model sees", async () => {
    await personal();
    fake.respond = () => ({ content: [{ type: "text", text: "noted" }] });
    const first = standIn.say(OWNER, "my favourite colour is blue");
    await repliesIn(dmOf(OWNER), 1);
    const aside = standIn.say(OWNER, "remember the code word pineapple");
    await repliesIn(dmOf(OWNER), 2);
    standIn.workspace.edit(dmOf(OWNER), first.ts, "my favourite colour is green");
    standIn.workspace.delete(dmOf(OWNER), aside.ts);
    standIn.say(OWNER, "what is my favourite colour?");
    await repliesIn(dmOf(OWNER), 3);
    const third = modelSaw(2);
    expect(third).toContain("my favourite colour is green");
    expect(third).not.toContain("blue");
    expect(third).not.toContain("pineapple");
    expect(third).toContain("what is my favourite colour?");
  });

  it("follows next_cursor through every page of a thread and of the DM's history", async () => {
    await personal();
    fake.respond = () => ({ content: [{ type: "text", text: "ok" }] });
    const root = standIn.say(OWNER, "thread root");
    await repliesIn(dmOf(OWNER), 1);
    for (const text of ["r1", "r2", "r3", "r4"])
      standIn.workspace.add(dmOf(OWNER), { user: OWNER, text, thread_ts: root.ts });
    standIn.api.maxPageSize = 2;
    standIn.say(OWNER, "last reply", { threadTs: root.ts });
    await repliesIn(dmOf(OWNER), 2);
    expect(modelSaw(1)).toMatch(/thread root.*r1.*r2.*r3.*r4.*last reply/);
    const pages = standIn.api.callsOf("conversations.replies");
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.slice(1).every((c) => Boolean(c.params.cursor))).toBe(true);
    standIn.say(OWNER, "top level again");
    await repliesIn(dmOf(OWNER), 3);
    // The DM's top level, newest pages first: every earlier top-level message is there, in order.
    expect(modelSaw(2)).toMatch(/thread root.*ok.*top level again/);
    expect(standIn.api.callsOf("conversations.history").length).toBeGreaterThanOrEqual(2);
  });

  it("tells the model what arrived when a message has attachments only, and cuts a 2 MB message with a note", async () => {
    await personal();
    standIn.say(OWNER, "", { files: [{ id: "F1", name: "report.pdf", mimetype: "application/pdf" }] });
    await repliesIn(dmOf(OWNER), 1);
    expect(modelSaw(0)).toContain("report.pdf (application/pdf)");
    standIn.say(OWNER, "x".repeat(2 * 1024 * 1024));
    await repliesIn(dmOf(OWNER), 2);
    const seen = modelSaw(1);
    expect(seen.length).toBeLessThan(300_000);
    expect(seen).toContain("Message truncated");
  });

  it("splits a long answer on paragraph boundaries at Slack's limit", async () => {
    await personal();
    const paragraphs = ["a", "b", "c"].map((ch) => ch.repeat(2500));
    fake.respond = () => ({ content: [{ type: "text", text: paragraphs.join("\n\n") }] });
    standIn.say(OWNER, "write a lot");
    await repliesIn(dmOf(OWNER), 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(botTexts(dmOf(OWNER))).toEqual(paragraphs);
  });

  it("cuts a long unbroken answer neither inside an escaped character nor inside an emoji", async () => {
    await personal();
    const answer = `${"x".repeat(3999)}😀${"x".repeat(3995)}<b> & tail`;
    fake.respond = () => ({ content: [{ type: "text", text: answer }] });
    standIn.say(OWNER, "write a lot");
    await repliesIn(dmOf(OWNER), 3);
    await new Promise((r) => setTimeout(r, 100));
    const pieces = botTexts(dmOf(OWNER));
    expect(pieces.join("")).toBe(`${"x".repeat(3999)}😀${"x".repeat(3995)}&lt;b&gt; &amp; tail`);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(4000);
      expect(piece.replace(/&(amp|lt|gt);/g, "")).not.toContain("&");
      expect(piece).not.toMatch(/[\uD800-\uDBFF]$|^[\uDC00-\uDFFF]/);
    }
  });

  it("posts only the last text step with verbose off, every text step with it on", async () => {
    await personal();
    let call = 0;
    fake.respond = () => {
      call += 1;
      return call % 2 === 1
        ? {
            content: [
              { type: "text", text: "let me look" },
              { type: "tool_use", id: `t${call}`, name: "no_such_tool", input: {} },
            ],
          }
        : { content: [{ type: "text", text: "the answer" }] };
    };
    standIn.say(OWNER, "question one");
    const [first] = await repliesIn(dmOf(OWNER), 1);
    // The working status said which tool ran, then the answer took its place: one message, updated in place.
    expect(standIn.api.callsOf("chat.update").map((c) => [c.params.ts, c.params.text])).toEqual([
      [first?.ts, `${WORKING_STATUS} running \`no_such_tool\``],
      [first?.ts, "the answer"],
    ]);
    await rt?.json("PATCH", "/agents/verbose", { verbose: true });
    standIn.say(OWNER, "question two");
    await repliesIn(dmOf(OWNER), 3);
    expect(botTexts(dmOf(OWNER))).toEqual(["the answer", "let me look", "the answer"]);
  });
});

describe("deliveries in personal mode", () => {
  it("posts All channels and Team chat deliveries to the owner's DM, opened with conversations.open", async () => {
    const r = await personal();
    await r.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await r.json("POST", "/agents/webhook-subscriptions", { name: "ci", deliverOnly: true, prompt: "build {n} red" });
    await r.json("POST", "/agents/webhook-subscriptions", {
      name: "pager",
      deliverOnly: true,
      deliverTo: "Team chat",
      prompt: "page {n}",
    });
    expect((await r.request("POST", "/agents/webhooks/ci", { n: 7 })).status).toBe(200);
    expect((await r.request("POST", "/agents/webhooks/pager", { n: 8 })).status).toBe(200);
    await repliesIn(dmOf(OWNER), 2);
    expect(botTexts(dmOf(OWNER))).toEqual(["**Webhook: ci**\n\nbuild 7 red", "**Webhook: pager**\n\npage 8"]);
    expect(standIn.api.callsOf("conversations.open")).toHaveLength(1);
    expect(standIn.api.callsOf("conversations.open")[0]?.params.users).toBe(OWNER);
  });
});

describe("faults", () => {
  it("answers a redelivered event_id once", async () => {
    await personal();
    const sent = standIn.say(OWNER, "only once please");
    standIn.redeliver(sent.eventId);
    standIn.redeliver(sent.eventId);
    await repliesIn(dmOf(OWNER), 1);
    await waitFor(() => [...standIn.envelopes.values()].every((e) => e.ackedAt !== undefined) || undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(botTexts(dmOf(OWNER))).toEqual(["echo: only once please"]);
    expect(fake.requests).toHaveLength(1);
  });

  it("waits out a 429's Retry-After on chat.postMessage and posts once", async () => {
    await personal();
    // The turn's first post is its working status, and the answer replaces it with chat.update.
    standIn.api.rateLimitNext("chat.postMessage", 1);
    standIn.api.rateLimitNext("chat.update", 1);
    standIn.say(OWNER, "rate limited");
    await repliesIn(dmOf(OWNER), 1);
    const posts = standIn.api.callsOf("chat.postMessage");
    expect(posts).toHaveLength(2);
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    const updates = standIn.api.callsOf("chat.update");
    expect(updates).toHaveLength(2);
    expect((updates[1]?.at ?? 0) - (updates[0]?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(botTexts(dmOf(OWNER))).toEqual(["echo: rate limited"]);
  });

  it("reconnects on refresh_requested mid-turn with no lost or doubled reply", async () => {
    await personal();
    fake.respond = (body) => ({ content: [{ type: "text", text: `echo: ${lastUserText(body)}` }], delayMs: 500 });
    const first = standIn.say(OWNER, "before the refresh");
    await waitFor(() => fake.requests.length === 1 || undefined);
    standIn.disconnect("refresh_requested");
    await waitFor(() => (standIn.connections === 2 && standIn.connected) || undefined);
    // Slack may deliver again what it sent around the refresh.
    standIn.redeliver(first.eventId);
    standIn.say(OWNER, "after the refresh");
    await repliesIn(dmOf(OWNER), 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(botTexts(dmOf(OWNER))).toEqual(["echo: before the refresh", "echo: after the refresh"]);
  });

  it("reconnects after the connection is dropped", async () => {
    await personal();
    standIn.dropSocket();
    await waitFor(() => (standIn.connections === 2 && standIn.connected) || undefined);
    standIn.say(OWNER, "still there?");
    expect((await repliesIn(dmOf(OWNER), 1))[0]?.text).toBe("echo: still there?");
  });

  it("posts the answer as a new message when its working status cannot be replaced", async () => {
    await personal();
    standIn.api.failNext("chat.update", "message_not_found");
    standIn.say(OWNER, "status gone");
    const [reply] = await repliesIn(dmOf(OWNER), 1);
    expect(reply?.text).toBe("echo: status gone");
    expect(standIn.api.callsOf("chat.update")).toHaveLength(1);
    expect(standIn.api.callsOf("chat.postMessage").map((c) => c.params.text)).toEqual([
      WORKING_STATUS,
      "echo: status gone",
    ]);
    // The next turn's model request leaves the stale status out of the conversation.
    standIn.say(OWNER, "next");
    await repliesIn(dmOf(OWNER), 2);
    expect(modelSaw(1)).not.toContain("Working on it");
    expect(modelSaw(1)).toContain("echo: status gone");
  });

  it("stores a delivery Slack refuses, logs its id, and posts it on a later retry", async () => {
    const { logger, records } = capturingLogger();
    await personal({ CHAT_OWNER_ID: OWNER }, logger);
    // The first refusal is the working status (not retried: the answer then posts as a new
    // message); the next two are the answer's, stored and retried.
    standIn.api.failNext("chat.postMessage", "internal_error", 3);
    standIn.say(OWNER, "eventually");
    await repliesIn(dmOf(OWNER), 1);
    const failures = records.filter((r) => r.msg === "team-chat delivery failed; stored and retried later");
    expect(failures.length).toBe(2);
    expect(String(failures[0]?.deliveryId)).toMatch(/^dlv_/);
    expect(failures[0]?.error).toBe("internal_error");
    // Marked sent once Slack took it, just after the reply shows there.
    const row = await waitFor(async () => {
      const stored = await rt?.runtime.deps.database.db.selectFrom("team_chat_delivery").selectAll().executeTakeFirst();
      return stored?.status === "sent" ? stored : undefined;
    });
    expect(row).toMatchObject({ id: failures[0]?.deliveryId, status: "sent", attempts: 2 });
    expect(botTexts(dmOf(OWNER))).toEqual(["echo: eventually"]);
  });
});

describe("what a stranger in the workspace can do", () => {
  it("guesses the pairing code a few times only: past that, even the right code is not heard from them", async () => {
    const db = (await personal({})).runtime.deps.database.db;
    const code = await waitFor(async () => (await pairingCode(db)) ?? undefined);
    for (let i = 0; i < MAX_WRONG_PAIRING_CODES; i++) standIn.say(STRANGER, `${String(i).padStart(4, "0")}-1111`);
    await repliesIn(dmOf(STRANGER), MAX_WRONG_PAIRING_CODES);
    const next = await waitFor(async () => {
      const current = await pairingCode(db);
      return current && current !== code ? current : undefined;
    });
    // Even a lucky guess of the new code: the stranger has had their tries.
    standIn.say(STRANGER, next);
    await new Promise((r) => setTimeout(r, 500));
    expect(await pairingCode(db)).toBe(next);
    expect(answers(standIn, dmOf(STRANGER))).toHaveLength(MAX_WRONG_PAIRING_CODES);
    // The operator's code still pairs the person it was meant for.
    standIn.say(OWNER, next);
    expect((await repliesIn(dmOf(OWNER), 1))[0]?.text).toContain("Paired");
  });

  it("cannot drive the agent through an event for another Slack app", async () => {
    await personal();
    const message = standIn.workspace.add(dmOf(OWNER), { user: OWNER, text: "delete everything" });
    standIn.sendEnvelope("events_api", {
      team_id: "T0STANDIN",
      api_app_id: "A0OTHERAPP",
      type: "event_callback",
      event_id: "Ev0OTHERAPP",
      event: { ...message, type: "message", channel: dmOf(OWNER), channel_type: "im", event_ts: message.ts },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(fake.requests).toHaveLength(0);
    expect(standIn.botMessages(dmOf(OWNER))).toHaveLength(0);
    // The bot's own app's events still run turns (the other one is history, never a turn).
    standIn.say(OWNER, "hello");
    expect((await repliesIn(dmOf(OWNER), 1))[0]?.text).toMatch(/hello$/);
    expect(fake.requests).toHaveLength(1);
  });
});
