import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SLACK_DELIVERY_LIMIT, SLACK_TEXT_LIMIT } from "../src/chat/slack/split.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia" });
  rt = await startSlackRuntime(fake, standIn, { env: { CHAT_OWNER_ID: OWNER } });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
});
afterEach(async () => {
  await rt.close();
  await standIn.close();
});

/**
 * A deliver-only subscription posts what a sender sends, unqueued and unlimited in rate: one
 * 1 MiB body rendered whole made the bot post some 260 messages to the owner's DM (and store and
 * retry each). What one delivery posts to Slack is bounded like a Slack message's text.
 */
describe("the size of a deliver-only message", () => {
  for (const prompt of ["alert: {a}", ""]) {
    it(`is cut at ${SLACK_DELIVERY_LIMIT} characters (template ${JSON.stringify(prompt)})`, async () => {
      await rt.json("POST", "/agents/webhook-subscriptions", { name: "flood", deliverOnly: true, prompt });
      const a = "word ".repeat(200_000);
      const res = await rt.request("POST", "/agents/webhooks/flood", { a });
      expect(res.status).toBe(200);
      const dm = standIn.workspace.dm(OWNER).id;
      const posted = await waitFor(() => {
        const texts = answers(standIn, dm).map((m) => m.text);
        return texts.join("").includes("_(truncated: ") ? texts : undefined;
      });
      // Ten messages of text, give or take where the cuts fall, then the note (was some 260).
      expect(posted.length).toBeLessThanOrEqual(SLACK_DELIVERY_LIMIT / SLACK_TEXT_LIMIT + 2);
      expect(posted.join("\n\n").length).toBeLessThan(SLACK_DELIVERY_LIMIT + 1000);
      expect(posted[0]).toMatch(/^\*\*Webhook: flood\*\*/);
    });
  }
});

/**
 * Slack reads `<!channel>` as a notification of everyone in the channel and `<url|label>` as a
 * link under another name. A webhook payload, or a model's answer steered by one, is text: it
 * reaches Slack escaped, and the stored thread keeps it as written.
 */
describe("markup in what is posted", () => {
  it("is escaped, so a sender cannot notify a channel or disguise a link", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "alerts", deliverOnly: true, prompt: "alert: {a}" });
    const a = "<!channel> pay at <https://evil.test|your bank> & <@U0OWNER>";
    expect((await rt.request("POST", "/agents/webhooks/alerts", { a })).status).toBe(200);
    const dm = standIn.workspace.dm(OWNER).id;
    const [posted] = await waitFor(() => {
      const texts = answers(standIn, dm).map((m) => m.text);
      return texts.length > 0 ? texts : undefined;
    });
    expect(posted).toBe(
      "**Webhook: alerts**\n\nalert: &lt;!channel&gt; pay at &lt;https://evil.test|your bank&gt; &amp; &lt;@U0OWNER&gt;",
    );
    expect(posted).not.toMatch(/[<>]/);
  });
});
