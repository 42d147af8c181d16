import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { tempHome, waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const FORMER = "U0FORMER";
const OWNER = "U0OWNER";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  await standIn.close();
});

async function start(home: string, owner: string): Promise<SlackTestRuntime> {
  const runtime = await startSlackRuntime(fake, standIn, { home, env: { CHAT_OWNER_ID: owner } });
  expect(await settled(runtime)).toMatchObject({ state: "connected" });
  await runtime.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  return runtime;
}

/**
 * Personal-mode deliveries go to the owner's DM, whose channel id is kept once opened. It was
 * kept whoever the owner was: after CHAT_OWNER_ID named someone else, every webhook result and
 * heartbeat alert still went to the former owner's DM. The DM kept is the current owner's only.
 */
describe("the owner's DM", () => {
  it("follows a change of CHAT_OWNER_ID: the former owner gets no more deliveries", async () => {
    standIn = await freshStandIn(fake, { [FORMER]: "fay", [OWNER]: "olivia" });
    const home = tempHome();
    rt = await start(home, FORMER);
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "alerts", deliverOnly: true, prompt: "alert: {a}" });
    expect((await rt.request("POST", "/agents/webhooks/alerts", { a: "one" })).status).toBe(200);
    const formerDm = standIn.workspace.dm(FORMER).id;
    await waitFor(() => (answers(standIn, formerDm).length === 1 ? true : undefined));
    await rt.close();

    rt = await start(home, OWNER);
    expect((await rt.request("POST", "/agents/webhooks/alerts", { a: "two" })).status).toBe(200);
    const ownerDm = standIn.workspace.dm(OWNER).id;
    await waitFor(() => (answers(standIn, ownerDm).length === 1 ? true : undefined));
    expect(answers(standIn, ownerDm)[0]?.text).toBe("**Webhook: alerts**\n\nalert: two");
    expect(answers(standIn, formerDm).map((m) => m.text)).toEqual(["**Webhook: alerts**\n\nalert: one"]);
  });
});

/**
 * The DM is opened (conversations.open) on the first delivery. When Slack refused or did not
 * answer that call, the delivery threw: a deliver-only webhook answered 500, and an All channels
 * delivery was not even stored in the web chat. Team chat is left out of that delivery instead.
 */
describe("an owner's DM that Slack will not open", () => {
  it("leaves team chat out: the webhook answers 200 and the web chat has the message", async () => {
    standIn = await freshStandIn(fake, { [OWNER]: "olivia" });
    rt = await start(tempHome(), OWNER);
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "alerts", deliverOnly: true, prompt: "alert: {a}" });
    standIn.api.unavailableNext("conversations.open", 8);
    const res = await rt.request("POST", "/agents/webhooks/alerts", { a: "disk" });
    expect(res.status).toBe(200);
    const web = await rt.json<{ items: Array<{ text: string }> }>(
      "GET",
      `/agents/threads/${rt.runtime.deps.messages.mainWebThreadId()}/messages`,
    );
    expect(web.body.items.map((m) => m.text)).toEqual(["**Webhook: alerts**\n\nalert: disk"]);
  });
});
