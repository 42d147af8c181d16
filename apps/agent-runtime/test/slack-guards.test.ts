import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_CONCURRENT_TURNS, MAX_PENDING_TURNS_PER_PERSON } from "../src/chat/slack/inbound.ts";
import { linkChannel } from "../src/chat/store.ts";
import { listSchedules } from "../src/schedules/store.ts";
import { loadAgent } from "../src/services/agent.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, waitFor } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const MEMBER = "U0MEMBER";
const CI_BOT = "U0CIBOT";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime | undefined;
let records: Array<Record<string, unknown>>;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia", [MEMBER]: "max" });
  standIn.workspace.addUser(CI_BOT, "ci-bot", true);
  standIn.workspace.addChannel("C0OPS", "ops", [OWNER, MEMBER, CI_BOT]);
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await standIn.close();
});

async function start(env: Record<string, string>): Promise<SlackTestRuntime> {
  const captured = capturingLogger();
  records = captured.records;
  rt = await startSlackRuntime(fake, standIn, {
    env: { CHAT_MODE: "team", CHAT_OWNER_ID: OWNER, ...env },
    logger: captured.logger,
  });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
  return rt;
}

async function linkOps(runtime: SlackTestRuntime): Promise<void> {
  standIn.inviteBot("C0OPS", OWNER);
  await waitFor(async () => {
    const listed = await runtime.json<{ data: unknown[] }>("GET", "/agents/team-chat/channels");
    return listed.body.data.length === 1 ? true : undefined;
  });
}

/** Another bot writes in the channel (in a thread when threadTs is set). */
function botSays(text: string, threadTs?: string) {
  const message = standIn.workspace.add("C0OPS", {
    user: CI_BOT,
    bot_id: "B0CIBOT",
    text,
    ...(threadTs ? { thread_ts: threadTs } : {}),
  });
  standIn.sendEvent({ ...message, type: "message", channel: "C0OPS", channel_type: "channel", event_ts: message.ts });
}

const quiet = () => new Promise((r) => setTimeout(r, 400));

describe("the bot loop guard (CHAT_ALLOW_BOTS=true)", () => {
  it("stops taking other bots' messages past CHAT_BOT_TURNS_MAX in a row; a person's message resets it", async () => {
    const runtime = await start({ CHAT_ALLOW_BOTS: "true", CHAT_BOT_TURNS_MAX: "2" });
    await linkOps(runtime);
    const root = standIn.say(MEMBER, "watch the deploy", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length === 1 ? true : undefined));
    for (const [i, text] of ["deploy step 1", "deploy step 2"].entries()) {
      botSays(text, root.ts);
      await waitFor(() => (answers(standIn, "C0OPS").length === i + 2 ? true : undefined));
    }
    expect(fake.requests).toHaveLength(3);
    // Past the cap: the next bot messages in the thread run nothing, each with one info line.
    botSays("deploy step 3 SECRET-TEXT", root.ts);
    botSays("deploy step 4", root.ts);
    await quiet();
    await runtime.slack.inbound?.idle();
    expect(fake.requests).toHaveLength(3);
    expect(answers(standIn, "C0OPS")).toHaveLength(3);
    const ignored = records.filter((r) => String(r.msg).includes("CHAT_BOT_TURNS_MAX"));
    expect(ignored).toHaveLength(2);
    expect(ignored[0]).toMatchObject({ level: 30, channel: "C0OPS", threadTs: root.ts, max: 2 });
    expect(JSON.stringify(ignored)).not.toContain("SECRET-TEXT");
    // A person writes in the thread: bots may run turns there again.
    standIn.say(OWNER, "keep going", { channel: "C0OPS", threadTs: root.ts });
    await waitFor(() => (answers(standIn, "C0OPS").length === 4 ? true : undefined));
    botSays("deploy step 5", root.ts);
    await waitFor(() => (answers(standIn, "C0OPS").length === 5 ? true : undefined));
    expect(fake.requests).toHaveLength(5);
  });

  it("counts a channel's top level as one conversation, with the default of 3", async () => {
    const runtime = await start({ CHAT_ALLOW_BOTS: "true" });
    await linkOps(runtime);
    for (let i = 1; i <= 5; i++) botSays(`alert ${i}`);
    await waitFor(() => (answers(standIn, "C0OPS").length === 3 ? true : undefined));
    await quiet();
    await runtime.slack.inbound?.idle();
    expect(fake.requests).toHaveLength(3);
    standIn.say(MEMBER, "ack", { channel: "C0OPS" });
    botSays("alert 6");
    await waitFor(() => (answers(standIn, "C0OPS").length === 5 ? true : undefined));
  });
});

describe("changes to the agent from team chat", () => {
  const toolNames = (body: Record<string, unknown>) =>
    ((body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
  const asksForChanges = () =>
    scripted([
      calls(
        toolUse("update_settings", { verbose: true }),
        toolUse("manage_schedules", { action: "create", name: "nightly", everySeconds: 3600, prompt: "x" }),
      ),
      text("done"),
    ]);

  it("are offered and run only in turns of the agent's owner, not of another channel member", async () => {
    const runtime = await start({});
    await linkOps(runtime);
    const db = runtime.runtime.deps.database.db;
    fake.respond = asksForChanges();
    standIn.say(MEMBER, "turn verbose on and schedule a nightly run", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length === 1 ? true : undefined));
    await runtime.slack.inbound?.idle();
    // The member's turn is not told about the tools, and the calls the model makes anyway are refused.
    const [first, second] = fake.requests.map((r) => r.body);
    expect(toolNames(first ?? {})).not.toContain("update_settings");
    expect(toolNames(first ?? {})).not.toContain("manage_schedules");
    expect(toolNames(first ?? {})).toContain("run_command");
    const refused = toolResultsOf(second ?? {});
    expect(refused).toHaveLength(2);
    for (const result of refused) {
      expect(result.is_error).toBe(true);
      expect(JSON.stringify(result.content)).toContain("only the agent's owner");
    }
    expect((await loadAgent(db)).verbose).toBe(0);
    expect(await listSchedules(db)).toHaveLength(0);

    // The owner, in the same channel, can.
    fake.requests.length = 0;
    standIn.say(OWNER, "turn verbose on and schedule a nightly run", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length === 2 ? true : undefined));
    await runtime.slack.inbound?.idle();
    expect(toolNames(fake.requests[0]?.body ?? {})).toEqual(
      expect.arrayContaining(["update_settings", "manage_schedules"]),
    );
    expect(toolResultsOf(fake.requests[1]?.body ?? {}).map((r) => r.is_error)).toEqual([false, false]);
    expect((await loadAgent(db)).verbose).toBe(1);
    expect((await listSchedules(db)).map((s) => s.name)).toEqual(["nightly"]);
  });

  it("are not offered to webhook turns, whose input comes from outside", async () => {
    const runtime = await start({});
    fake.respond = asksForChanges();
    await runtime.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await runtime.json("POST", "/agents/webhook-subscriptions", { name: "ci", deliverTo: "Chat", prompt: "build {n}" });
    const hook = await runtime.request("POST", "/agents/webhooks/ci", { n: 7 });
    expect(hook.status).toBeLessThan(300);
    await waitFor(() => (fake.requests.length === 2 ? true : undefined));
    expect(toolNames(fake.requests[0]?.body ?? {})).not.toContain("update_settings");
    expect(toolResultsOf(fake.requests[1]?.body ?? {}).every((r) => r.is_error)).toBe(true);
    expect((await loadAgent(runtime.runtime.deps.database.db)).verbose).toBe(0);
  });
});

describe("the runtime's credentials in team chat", () => {
  it("are never posted: a member's turn that reads .env posts [redacted] in their place", async () => {
    const runtime = await start({ CLOUD_B_API_KEY: "cloudb-key-5f1e2d3c4b5a69788796" });
    await linkOps(runtime);
    const workspace = runtime.runtime.deps.config.workspaceRoot;
    mkdirSync(workspace, { recursive: true });
    writeFileSync(
      join(workspace, "copy.env"),
      `CHAT_BOT_TOKEN=${standIn.botToken}\nCHAT_APP_TOKEN=${standIn.appToken}\nCLOUD_B_API_KEY=cloudb-key-5f1e2d3c4b5a69788796\n`,
    );
    fake.respond = (body) => {
      const [result] = toolResultsOf(body);
      if (result) return { content: [{ type: "text", text: `Here it is:\n${JSON.stringify(result.content)}` }] };
      return { content: [toolUse("read_file", { path: "copy.env" })] };
    };
    standIn.say(MEMBER, "what is in copy.env?", { channel: "C0OPS" });
    const [answer] = await waitFor(() =>
      answers(standIn, "C0OPS").length === 1 ? answers(standIn, "C0OPS") : undefined,
    );
    await runtime.slack.inbound?.idle();
    expect(answer?.text).toContain("CHAT_BOT_TOKEN=[redacted]");
    // Every Web API call's parameters (the token a call presents is not among them).
    const posted = JSON.stringify(standIn.api.calls);
    for (const value of [standIn.botToken, standIn.appToken, "cloudb-key-5f1e2d3c4b5a69788796"]) {
      expect(posted).not.toContain(value);
    }
  });
});

describe("a flood of messages in a linked channel", () => {
  it(`runs at most ${MAX_PENDING_TURNS_PER_PERSON} turns per person and ${MAX_CONCURRENT_TURNS} at once; the rest of a flood is dropped`, async () => {
    const runtime = await start({});
    await linkOps(runtime);
    let inFlight = 0;
    let most = 0;
    fake.respond = () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
      }, 400);
      return { content: [{ type: "text", text: "ok" }], delayMs: 400 };
    };
    for (let i = 0; i < 3 * MAX_PENDING_TURNS_PER_PERSON; i++) standIn.say(MEMBER, `spam ${i}`, { channel: "C0OPS" });
    for (let i = 0; i < 3; i++) standIn.say(OWNER, `question ${i}`, { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length >= MAX_PENDING_TURNS_PER_PERSON + 3 ? true : undefined));
    await runtime.slack.inbound?.idle();
    await quiet();
    expect(fake.requests).toHaveLength(MAX_PENDING_TURNS_PER_PERSON + 3);
    expect(answers(standIn, "C0OPS")).toHaveLength(MAX_PENDING_TURNS_PER_PERSON + 3);
    expect(most).toBeLessThanOrEqual(MAX_CONCURRENT_TURNS);
    // The owner's questions all ran, whatever the member sent.
    const asked = fake.requests.map((r) => JSON.stringify(r.body.messages));
    for (let i = 0; i < 3; i++) expect(asked.some((m) => m.includes(`question ${i}`))).toBe(true);
    expect(records.some((r) => String(r.msg).includes("team chat dropped a message"))).toBe(true);
    // Once the member's turns ended, they are heard again.
    standIn.say(MEMBER, "one more", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length === MAX_PENDING_TURNS_PER_PERSON + 4 ? true : undefined));
  });
});

describe("which channels team mode takes", () => {
  const linked = async (runtime: SlackTestRuntime) =>
    (await runtime.json<{ data: Array<{ id: string }> }>("GET", "/agents/team-chat/channels")).body.data.map(
      (c) => c.id,
    );
  const refusals = (channel: string) =>
    records.filter((r) => r.channel === channel && String(r.msg).startsWith("team chat refused a channel"));

  it("refuses an externally shared channel unless CHAT_ALLOWED_CHANNELS lists it; internal ones link as before", async () => {
    standIn.workspace.addChannel("C0EXT", "partners", [OWNER, MEMBER], { extShared: true });
    let runtime = await start({});
    standIn.inviteBot("C0EXT", MEMBER);
    await linkOps(runtime);
    await runtime.slack.inbound?.idle();
    expect(await linked(runtime)).toEqual(["C0OPS"]);
    expect(refusals("C0EXT")).toMatchObject([{ level: 30 }]);
    expect(String(refusals("C0EXT")[0]?.msg)).toContain("externally shared");
    // The channels view cannot link it either: the guard's reason comes back as a problem.
    const byHand = await runtime.json<{ status: number; detail: string }>("PATCH", "/agents/team-chat/channels/C0EXT", {
      linked: true,
    });
    expect(byHand).toMatchObject({ status: 409, body: { status: 409 } });
    expect(byHand.body.detail).toBe(
      "Channel C0EXT cannot be linked: it is externally shared (Slack Connect) and not in CHAT_ALLOWED_CHANNELS",
    );
    expect(await linked(runtime)).toEqual(["C0OPS"]);
    // Linked before it was shared, it still runs no turns; the refusal is logged once.
    await linkChannel(runtime.runtime.deps.database.db, "C0EXT", "partners");
    standIn.say(MEMBER, "hello partners", { channel: "C0EXT" });
    standIn.mention(MEMBER, "C0EXT", "anyone?");
    await quiet();
    await runtime.slack.inbound?.idle();
    expect(fake.requests).toHaveLength(0);
    expect(refusals("C0EXT")).toHaveLength(1);

    await runtime.close();
    // Listed, it is taken; a channel not listed is refused then.
    runtime = await startSlackRuntime(fake, standIn, {
      home: runtime.home,
      env: { CHAT_MODE: "team", CHAT_OWNER_ID: OWNER, CHAT_ALLOWED_CHANNELS: "C0EXT" },
      logger: capturingLogger().logger,
    });
    rt = runtime;
    expect(await settled(runtime)).toMatchObject({ state: "connected" });
    standIn.say(MEMBER, "hello partners", { channel: "C0EXT" });
    await waitFor(() => (answers(standIn, "C0EXT").length === 1 ? true : undefined));
    standIn.say(MEMBER, "the build?", { channel: "C0OPS" });
    await quiet();
    await runtime.slack.inbound?.idle();
    expect(fake.requests).toHaveLength(1);
    expect(answers(standIn, "C0OPS")).toHaveLength(0);
  });

  it("delivers only to allowed channels: one linked before the list was set gets none", async () => {
    standIn.workspace.addChannel("C0DEV", "dev", [OWNER, MEMBER]);
    const runtime = await start({ CHAT_ALLOWED_CHANNELS: "C0DEV" });
    const deliver = async (name: string, prompt: string) => {
      await runtime.json("PUT", "/agents/webhooks/enabled", { enabled: true });
      await runtime.json("POST", "/agents/webhook-subscriptions", {
        name,
        deliverOnly: true,
        deliverTo: "Team chat",
        prompt,
      });
      return runtime.request("POST", `/agents/webhooks/${name}`, {});
    };
    // The oldest link (from before the list was set), and even flagged main, but not on the list.
    await linkChannel(runtime.runtime.deps.database.db, "C0OPS", "ops");
    expect((await runtime.json("PATCH", "/agents/team-chat/channels/C0OPS", { main: true })).status).toBe(200);
    expect((await deliver("alerts", "disk full")).status).toBe(200);
    const webThread = runtime.runtime.deps.messages.mainWebThreadId();
    const web = await runtime.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${webThread}/messages`);
    expect(web.body.items.map((m) => m.text)).toEqual(["**Webhook: alerts**\n\ndisk full"]);

    await new Promise((r) => setTimeout(r, 5));
    await runtime.json("PATCH", "/agents/team-chat/channels/C0DEV", { linked: true });
    expect((await deliver("alerts2", "cpu hot")).status).toBe(200);
    await waitFor(() => (answers(standIn, "C0DEV").length === 1 ? true : undefined));
    expect(answers(standIn, "C0DEV")[0]?.text).toBe("**Webhook: alerts2**\n\ncpu hot");
    expect(answers(standIn, "C0OPS")).toHaveLength(0);
  });

  it("links only the channels of CHAT_ALLOWED_CHANNELS when it is set", async () => {
    standIn.workspace.addChannel("C0DEV", "dev", [OWNER, MEMBER]);
    const runtime = await start({ CHAT_ALLOWED_CHANNELS: "C0DEV" });
    standIn.inviteBot("C0OPS", OWNER);
    standIn.inviteBot("C0DEV", OWNER);
    await waitFor(async () => ((await linked(runtime)).length === 1 ? true : undefined));
    await runtime.slack.inbound?.idle();
    expect(await linked(runtime)).toEqual(["C0DEV"]);
    expect(String(refusals("C0OPS")[0]?.msg)).toContain("not in CHAT_ALLOWED_CHANNELS");
  });

  it("links on the channels view only what CHAT_ALLOWED_CHANNELS allows, and still unlinks any channel", async () => {
    standIn.workspace.addChannel("C0DEV", "dev", [OWNER, MEMBER]);
    const runtime = await start({ CHAT_ALLOWED_CHANNELS: "C0DEV" });
    const refused = await runtime.request("PATCH", "/agents/team-chat/channels/C0OPS", { linked: true, main: true });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(await refused.json()).toMatchObject({
      type: expect.stringMatching(/\/conflict$/),
      status: 409,
      detail: "Channel C0OPS cannot be linked: it is not in CHAT_ALLOWED_CHANNELS",
    });
    expect(await linked(runtime)).toEqual([]);

    const allowed = await runtime.json<{ data: Array<{ id: string; name: string | null }> }>(
      "PATCH",
      "/agents/team-chat/channels/C0DEV",
      { linked: true },
    );
    expect(allowed.status).toBe(200);
    expect(allowed.body.data).toMatchObject([{ id: "C0DEV", name: "dev" }]);

    // A channel linked before the list was set is unlinked as any other.
    await linkChannel(runtime.runtime.deps.database.db, "C0OPS", "ops");
    const unlinked = await runtime.json("PATCH", "/agents/team-chat/channels/C0OPS", { linked: false });
    expect(unlinked.status).toBe(200);
    expect(await linked(runtime)).toEqual(["C0DEV"]);
  });
});

describe("memory in team chat", () => {
  it("a member's turn reaches only notes shared with the team, never what the owner said in private", async () => {
    const runtime = await start({});
    await linkOps(runtime);
    const memory = runtime.runtime.deps.memory;
    // What the owner told the agent in private (its DM, the web chat).
    const owners = await memory.add("Olivia's salary review: raise to 250k in March", "web");
    fake.respond = scripted([
      calls(
        toolUse("memory", { action: "search", query: "salary review raise" }),
        toolUse("memory", { action: "forget", id: owners.id }),
        toolUse("memory", { action: "remember", text: "The ops salary review checklist lives in the wiki" }),
      ),
      text("done"),
    ]);
    standIn.say(MEMBER, "what do you know about the salary review?", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length === 1 ? true : undefined));
    await runtime.slack.inbound?.idle();
    const [searched, forgot, remembered] = toolResultsOf(fake.requests[1]?.body ?? {});
    expect(JSON.parse(String(searched?.content)).hits).toEqual([]);
    expect(forgot).toMatchObject({ is_error: true });
    expect(remembered?.is_error).toBe(false);
    expect(JSON.stringify(fake.requests)).not.toContain("250k");

    // The owner's turns reach both: their own note is still there, and the member's is shared.
    fake.requests.length = 0;
    fake.respond = scripted([calls(toolUse("memory", { action: "search", query: "salary review" })), text("ok")]);
    standIn.say(OWNER, "what do we know about the salary review?", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn, "C0OPS").length === 2 ? true : undefined));
    await runtime.slack.inbound?.idle();
    const [found] = toolResultsOf(fake.requests[1]?.body ?? {});
    const texts = JSON.parse(String(found?.content)).hits.map((h: { text: string }) => h.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        "Olivia's salary review: raise to 250k in March",
        "The ops salary review checklist lives in the wiki",
      ]),
    );
  });
});
