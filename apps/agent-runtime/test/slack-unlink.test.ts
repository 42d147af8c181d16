import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const MEMBER = "U0MEMBER";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia", [MEMBER]: "max" });
  standIn.workspace.addChannel("C0OPS", "ops", [OWNER, MEMBER]);
  standIn.workspace.addChannel("C0DEV", "dev", [OWNER, MEMBER]);
  rt = await startSlackRuntime(fake, standIn, { env: { CHAT_MODE: "team", CHAT_OWNER_ID: OWNER } });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  await rt.json("POST", "/agents/webhook-subscriptions", { name: "alerts", deliverOnly: true, deliverTo: "Team chat" });
});
afterEach(async () => {
  await rt.close();
  await standIn.close();
});

const linked = async () =>
  (await rt.json<{ data: Array<{ id: string }> }>("GET", "/agents/team-chat/channels")).body.data.map((c) => c.id);

async function linkBoth(): Promise<void> {
  standIn.inviteBot("C0OPS", OWNER);
  await waitFor(async () => ((await linked()).length === 1 ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 5));
  standIn.inviteBot("C0DEV", OWNER);
  await waitFor(async () => ((await linked()).length === 2 ? true : undefined));
}

const alert = (event_type: string) => rt.request("POST", "/agents/webhooks/alerts", { event_type });

/**
 * Deliveries go to the oldest linked channel (or the flagged one). A channel the bot was removed
 * from, or that was archived, stayed linked: every delivery after it went there, was refused
 * (`not_in_channel`) and given up, so any member who removed the bot from that channel made every
 * webhook result and heartbeat alert vanish. Such a channel is unlinked, and deliveries go on to
 * the next one (or to the web chat when none is left).
 */
describe("a linked channel the bot can no longer post in", () => {
  for (const event of [
    { type: "channel_left", channel: "C0OPS", actor_id: MEMBER },
    { type: "member_left_channel", user: "U0AGENT", channel: "C0OPS", channel_type: "C" },
    { type: "channel_archive", channel: "C0OPS", user: MEMBER },
  ]) {
    it(`is unlinked on ${event.type}, and deliveries go to the next channel`, async () => {
      await linkBoth();
      standIn.sendEvent({ ...event, event_ts: standIn.workspace.nextTs() });
      await waitFor(async () => ((await linked()).includes("C0OPS") ? undefined : true));
      expect(await linked()).toEqual(["C0DEV"]);
      expect((await alert("disk")).status).toBe(200);
      await waitFor(() => (answers(standIn, "C0DEV").length === 1 ? true : undefined));
      expect(answers(standIn, "C0OPS")).toEqual([]);
    });
  }

  it("is not unlinked when another member leaves it", async () => {
    await linkBoth();
    standIn.sendEvent({
      type: "member_left_channel",
      user: MEMBER,
      channel: "C0OPS",
      channel_type: "C",
      event_ts: standIn.workspace.nextTs(),
    });
    expect((await alert("disk")).status).toBe(200);
    await waitFor(() => (answers(standIn, "C0OPS").length === 1 ? true : undefined));
    expect(await linked()).toEqual(["C0OPS", "C0DEV"]);
  });

  it("is unlinked when Slack refuses a delivery there for good, and the next delivery goes on", async () => {
    await linkBoth();
    standIn.api.failNext("chat.postMessage", "not_in_channel");
    expect((await alert("first")).status).toBe(200);
    await waitFor(async () => ((await linked()).includes("C0OPS") ? undefined : true));
    expect((await alert("second")).status).toBe(200);
    await waitFor(() => (answers(standIn, "C0DEV").length === 1 ? true : undefined));
    expect(answers(standIn, "C0DEV")[0]?.text).toContain('"event_type": "second"');
  });
});
