import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
  fake.respond = (body) => ({ content: [{ type: "text", text: `done: ${lastUserText(body)}` }] });
  rt = await startTestRuntime(fake);
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  const created = await rt.json("POST", "/agents/webhook-subscriptions", { name: "ci", events: "push" });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

const remembered = () =>
  (rt.runtime.deps.database.sqlite.prepare("select count(*) as n from webhook_delivery").get() as { n: number }).n;

const post = (event: string, deliveryId: string) =>
  rt.request(
    "POST",
    "/agents/webhooks/ci",
    { ref: "main" },
    { "x-github-event": event, "x-github-delivery": deliveryId },
  );

/**
 * The deliveries remembered for 24 h (to answer a retry with the first answer) are what ran or
 * was posted. An ignored one changed nothing, and a retry of it is ignored again: remembered, it
 * was a row a day for every post anyone made with a new delivery id and an event the
 * subscription does not take, with no bound on their number.
 */
describe("the delivery log", () => {
  it("remembers no ignored delivery, however many arrive", async () => {
    for (let i = 0; i < 50; i++) {
      const res = await post("issues", `flood-${i}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "ignored", event: "issues" });
    }
    expect(remembered()).toBe(0);
    // Sent again, an ignored delivery is ignored again.
    expect(await (await post("issues", "flood-0")).json()).toEqual({ status: "ignored", event: "issues" });
  });

  it("still answers a retry of a delivery that ran with its first answer", async () => {
    const before = remembered();
    const first = await post("push", "run-1");
    expect(first.status).toBe(202);
    const { runId } = (await first.json()) as { runId: string };
    const again = await post("push", "run-1");
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: "accepted", event: "push", runId, duplicate: true });
    expect(remembered()).toBe(before + 1);
    await waitFor(() => rt.runtime.deps.runs.pendingCount("ci") === 0);
    await rt.runtime.deps.runs.idle();
  });
});
