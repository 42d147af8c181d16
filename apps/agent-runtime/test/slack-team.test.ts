import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { threadContext } from "../src/context/compaction.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, readSse, waitFor } from "./support/runtime.ts";
import { freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const MEMBER = "U0MEMBER";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime;
let records: Array<Record<string, unknown>>;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia", [MEMBER]: "max" });
  for (const [id, name] of [
    ["C0OPS", "ops"],
    ["C0DEV", "dev"],
    ["C0RANDOM", "random"],
  ] as const) {
    standIn.workspace.addChannel(id, name, [OWNER, MEMBER]);
  }
  const captured = capturingLogger();
  records = captured.logger ? captured.records : [];
  rt = await startSlackRuntime(fake, standIn, {
    env: {
      CHAT_MODE: "team",
      CHAT_OWNER_ID: OWNER,
      COMPACTION_TAIL_MESSAGES: "1",
      CONTEXT_WINDOW_TOKENS: "100",
      COMPACTION_THRESHOLD_PERCENT: "1",
      CLOUD_B_MODEL_ID: "deploy-unknown-to-the-catalog",
    },
    logger: captured.logger,
  });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
});
afterEach(async () => {
  await rt.close();
  await standIn.close();
});

interface Channels {
  data: Array<{ id: string; name: string | null; main: boolean }>;
}
const channels = async () => (await rt.json<Channels>("GET", "/agents/team-chat/channels")).body.data;

async function webhook(name: string, deliverTo: "Team chat" | "All channels", prompt: string) {
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  await rt.json("POST", "/agents/webhook-subscriptions", { name, deliverOnly: true, deliverTo, prompt });
  return rt.request("POST", `/agents/webhooks/${name}`, {});
}

describe("team mode", () => {
  it("links a channel when the bot is invited, answers mentions in a thread and follows that thread", async () => {
    standIn.inviteBot("C0OPS", OWNER);
    await waitFor(async () => ((await channels()).length === 1 ? true : undefined));
    expect(await channels()).toMatchObject([{ id: "C0OPS", name: "ops", main: false }]);
    const mention = standIn.mention(MEMBER, "C0OPS", "is the deploy done?");
    const [answer] = await waitFor(() =>
      standIn.botMessages("C0OPS").length ? standIn.botMessages("C0OPS") : undefined,
    );
    expect(answer).toMatchObject({ thread_ts: mention.ts, text: "echo: max: is the deploy done?" });
    // A reply in that thread, without a mention, continues the conversation.
    standIn.say(OWNER, "and the migration?", { channel: "C0OPS", threadTs: mention.ts });
    await waitFor(() => (standIn.botMessages("C0OPS").length === 2 ? true : undefined));
    expect(standIn.botMessages("C0OPS")[1]).toMatchObject({ thread_ts: mention.ts });
    expect(JSON.stringify(fake.requests[1]?.body)).toContain("olivia: and the migration?");
    // Unlinked channels, and plain channel messages outside the agent's threads, run nothing.
    standIn.mention(MEMBER, "C0RANDOM", "hello?");
    standIn.say(MEMBER, "chatter", { channel: "C0OPS" });
    await new Promise((r) => setTimeout(r, 400));
    expect(standIn.botMessages("C0RANDOM")).toHaveLength(0);
    expect(fake.requests).toHaveLength(2);
  });

  it("delivers Team chat to the flagged main channel, else the oldest linked; nothing linked falls back to web with a warning", async () => {
    let res = await webhook("alerts", "Team chat", "disk full");
    expect(res.status).toBe(200);
    const webThread = rt.runtime.deps.messages.mainWebThreadId();
    const web = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${webThread}/messages`);
    expect(web.body.items.map((m) => m.text)).toEqual(["**Webhook: alerts**\n\ndisk full"]);
    expect(
      records.some((r) => r.level === 40 && String(r.msg).includes("no team-chat direct message or channel is linked")),
    ).toBe(true);

    standIn.inviteBot("C0OPS", OWNER);
    await waitFor(async () => ((await channels()).length === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 5));
    await rt.json("PATCH", "/agents/team-chat/channels/C0DEV", { linked: true });
    res = await webhook("alerts2", "Team chat", "cpu hot");
    await waitFor(() => (standIn.botMessages("C0OPS").length === 1 ? true : undefined));
    expect(standIn.botMessages("C0OPS")[0]?.text).toBe("**Webhook: alerts2**\n\ncpu hot");
    expect(standIn.botMessages("C0DEV")).toHaveLength(0);

    await rt.json("PATCH", "/agents/team-chat/channels/C0DEV", { main: true });
    await webhook("alerts3", "All channels", "memory low");
    await waitFor(() => (standIn.botMessages("C0DEV").length === 1 ? true : undefined));
    expect(standIn.botMessages("C0DEV")[0]?.text).toBe("**Webhook: alerts3**\n\nmemory low");
    expect(standIn.botMessages("C0OPS")).toHaveLength(1);
  });

  it("ignores other bots by default; with CHAT_ALLOW_BOTS=true their mentions run turns, its own messages never", async () => {
    standIn.workspace.addUser("U0CIBOT", "ci-bot", true);
    standIn.inviteBot("C0OPS", OWNER);
    await waitFor(async () => ((await channels()).length === 1 ? true : undefined));
    const botMention = (text: string) => {
      const message = standIn.workspace.add("C0OPS", {
        user: "U0CIBOT",
        bot_id: "B0CIBOT",
        text: `<@${standIn.botUserId}> ${text}`,
      });
      standIn.sendEvent({ ...message, type: "app_mention", channel: "C0OPS", event_ts: message.ts });
    };
    botMention("build 1 failed");
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.requests).toHaveLength(0);

    await rt.close();
    // The same database (the link stays), now taking other bots' messages.
    rt = await startSlackRuntime(fake, standIn, { home: rt.home, env: { CHAT_MODE: "team", CHAT_ALLOW_BOTS: "true" } });
    expect(await settled(rt)).toMatchObject({ state: "connected" });
    botMention("build 2 failed");
    await waitFor(() => (standIn.botMessages("C0OPS").length === 1 ? true : undefined));
    expect(standIn.botMessages("C0OPS")[0]?.text).toBe("echo: ci-bot: build 2 failed");
    const own = standIn.workspace.add("C0OPS", {
      user: standIn.botUserId,
      bot_id: standIn.botId,
      text: `<@${standIn.botUserId}> me`,
    });
    standIn.sendEvent({ ...own, type: "app_mention", channel: "C0OPS", event_ts: own.ts });
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.requests).toHaveLength(1);
  });

  it("never compacts team-chat threads, while a web thread with the same settings is compacted", async () => {
    standIn.inviteBot("C0OPS", OWNER);
    await waitFor(async () => ((await channels()).length === 1 ? true : undefined));
    const mention = standIn.mention(MEMBER, "C0OPS", "one");
    await waitFor(() => (standIn.botMessages("C0OPS").length === 1 ? true : undefined));
    for (const text of ["two", "three"]) {
      standIn.say(MEMBER, text, { channel: "C0OPS", threadTs: mention.ts });
      await waitFor(() => (fake.requests.length === ["one", "two", "three"].indexOf(text) + 1 ? true : undefined));
    }
    await waitFor(() => (standIn.botMessages("C0OPS").length === 3 ? true : undefined));
    await rt.slack.inbound?.idle();
    const teamThread = await rt.runtime.deps.database.db
      .selectFrom("thread")
      .select("id")
      .where("external_id", "=", `C0OPS:${mention.ts}`)
      .executeTakeFirstOrThrow();
    expect(threadContext(rt.runtime.deps.database.sqlite, teamThread.id)?.compactions ?? 0).toBe(0);

    const webThread = rt.runtime.deps.messages.mainWebThreadId();
    for (const text of ["w1", "w2", "w3"]) {
      await readSse(await rt.request("POST", `/agents/threads/${webThread}/messages`, { text }));
    }
    await waitFor(() =>
      (threadContext(rt.runtime.deps.database.sqlite, webThread)?.compactions ?? 0) > 0 ? true : undefined,
    );
    const listed = await rt.json<{ items: Array<{ id: string }> }>("GET", "/agents/threads");
    expect(listed.body.items.map((t) => t.id)).toEqual([webThread]);
  });
});
