import { createHmac } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InProcessTeamChat } from "../src/chat/team-chat.ts";
import {
  SenderBound,
  UNVERIFIED_DELIVERIES_PER_MINUTE,
  UNVERIFIED_DELIVERY_BURST,
} from "../src/webhooks/sender-bound.ts";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  fake.requests.length = 0;
  fake.respond = (body) => ({ content: [{ type: "text", text: `done: ${lastUserText(body)}` }] });
  rt = await startTestRuntime(fake);
});
afterEach(() => rt.close());

const post = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  rt.request("POST", `/agents/webhooks/${name}`, body, headers);

const SENDER_SECRET = "sender-secret-4b1e";
/** A post signed as GitHub signs its deliveries. */
const signedPost = (name: string, body: unknown) => {
  const text = JSON.stringify(body);
  const signature = `sha256=${createHmac("sha256", SENDER_SECRET).update(text).digest("hex")}`;
  return post(name, text, { "x-hub-signature-256": signature });
};

async function subscribe(body: Record<string, unknown>) {
  const res = await rt.json("POST", "/agents/webhook-subscriptions", body);
  expect(res.status).toBe(201);
  return res.body;
}

async function webTexts(): Promise<string[]> {
  const threads = await rt.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const main = threads.body.items.find((t) => t.main)?.id;
  const { body } = await rt.json<{ items: Array<{ text: string }> }>("GET", `/agents/threads/${main}/messages`);
  return body.items.map((m) => m.text);
}

async function runsOf(name: string) {
  const res = await rt.json<{ items: Array<{ id: string; status: string; event: string; error: string | null }> }>(
    "GET",
    `/agents/webhook-subscriptions/${name}/runs?limit=200`,
  );
  return res.body.items;
}

describe("management API", () => {
  it("normalises names, applies defaults, rejects bad names and duplicates", async () => {
    const created = await subscribe({ name: "CI Alerts" });
    expect(created).toMatchObject({
      name: "ci-alerts",
      description: "",
      events: "",
      deliverTo: "All channels",
      deliverOnly: false,
      prompt: "",
      active: true,
      endpoint: "/agents/webhooks/ci-alerts",
    });
    for (const name of ["-leading", "bad/name", "ünïcode", ""]) {
      const res = await rt.json<{ errors: Array<{ pointer: string }> }>("POST", "/agents/webhook-subscriptions", {
        name,
      });
      expect(res.status, name).toBe(400);
      expect(res.body.errors[0]?.pointer).toBe("/body/name");
    }
    expect((await rt.request("POST", "/agents/webhook-subscriptions", { name: "ci alerts" })).status).toBe(409);
    const bad = await rt.request("POST", "/agents/webhook-subscriptions", { name: "x", deliverTo: "Email" });
    expect(bad.status).toBe(400);
  });

  it("gets, updates, lists and deletes; unknown names are 404", async () => {
    await subscribe({ name: "gh", events: " push , issues,, " });
    expect((await rt.json("GET", "/agents/webhook-subscriptions/gh")).body.events).toBe("push,issues");
    const patched = await rt.json("PATCH", "/agents/webhook-subscriptions/gh", { active: false, deliverTo: "Chat" });
    expect(patched.body).toMatchObject({ active: false, deliverTo: "Chat" });
    const state = await rt.json<{ enabled: boolean; subscriptions: Array<{ name: string }> }>(
      "GET",
      "/agents/webhooks",
    );
    expect(state.body.enabled).toBe(false);
    expect(state.body.subscriptions.map((s) => s.name)).toEqual(["gh"]);
    expect((await rt.request("DELETE", "/agents/webhook-subscriptions/gh")).status).toBe(204);
    for (const [method, path] of [
      ["GET", "/agents/webhook-subscriptions/gh"],
      ["PATCH", "/agents/webhook-subscriptions/gh"],
      ["DELETE", "/agents/webhook-subscriptions/gh"],
      ["GET", "/agents/webhook-subscriptions/gh/runs"],
    ] as const) {
      const res = await rt.request(method, path, method === "PATCH" ? { active: true } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
  });
});

describe("receiver statuses and check order", () => {
  it("says how to turn on the receiver, create the subscription or make it active", async () => {
    const detail = async (name: string) => (await post(name, { a: 1 })).json() as Promise<{ detail: string }>;
    expect((await detail("hook")).detail).toBe(
      'The webhook receiver is disabled: turn it on with PUT /agents/webhooks/enabled {"enabled": true}',
    );
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    expect((await detail("hook")).detail).toBe(
      'No webhook subscription named hook: create it with POST /agents/webhook-subscriptions {"name": "hook"}',
    );
    await subscribe({ name: "hook", active: false });
    expect((await detail("hook")).detail).toBe(
      'The webhook subscription hook is disabled: turn it on with PATCH /agents/webhook-subscriptions/hook {"active": true}',
    );
  });

  it("answers 403 for every name while the receiver is off, and toggles without a restart", async () => {
    await subscribe({ name: "hook" });
    for (const name of ["hook", "no-such-hook"]) expect((await post(name, { a: 1 })).status).toBe(403);
    expect((await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true })).body.enabled).toBe(true);
    expect((await post("hook", { a: 1 })).status).toBe(202);
    expect((await post("no-such-hook", { a: 1 })).status).toBe(404);
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: false });
    expect((await post("hook", { a: 1 })).status).toBe(403);
  });

  it("checks inactive before the body, the body before the event filter, the filter before deliver-only", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "off", active: false });
    expect((await post("off", "not json")).status).toBe(403);
    await subscribe({ name: "filtered", events: "push", deliverOnly: true, prompt: "pushed {ref}" });
    for (const body of ["{broken", "[1,2]", '"text"', "null", "42"]) {
      const res = await post("filtered", body, { "x-github-event": "issues" });
      expect(res.status, body).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
    const wrongType = await rt.request("POST", "/agents/webhooks/filtered", JSON.stringify({ a: 1 }), {
      "content-type": "text/plain",
    });
    expect(wrongType.status).toBe(400);
    const ignored = await post("filtered", { ref: "main" }, { "x-github-event": "issues" });
    expect(ignored.status).toBe(200);
    expect(await ignored.json()).toEqual({ status: "ignored", event: "issues" });
    const delivered = await post("filtered", { ref: "main" }, { "x-github-event": "push" });
    expect(await delivered.json()).toEqual({ status: "delivered", event: "push" });
    expect(await webTexts()).toEqual(["**Webhook: filtered**\n\npushed main"]);
    expect(fake.requests).toHaveLength(0);
  });

  it("refuses an event type that is too long or holds control or bidirectional characters, and runs nothing", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "typed", deliverOnly: true, prompt: "got {a}" });
    const long = await post("typed", { a: 1 }, { "x-github-event": "x".repeat(101) });
    expect(long.status).toBe(400);
    expect(((await long.json()) as { detail: string }).detail).toBe(
      "The x-github-event header is longer than 100 characters",
    );
    const hidden = await post("typed", { event_type: "deploy\u202eevil" });
    expect(hidden.status).toBe(400);
    expect(((await hidden.json()) as { detail: string }).detail).toContain("The body's event_type holds control");
    // The longest type allowed is delivered: the one delivery made.
    expect((await post("typed", { a: 1 }, { "x-gitlab-event": "y".repeat(100) })).status).toBe(200);
    expect(await webTexts()).toHaveLength(1);
  });

  it("accepts agent-mode runs with 202 and posts the labelled answer to the target", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "deploys", prompt: "Summarise deploy {service} ({status})", deliverTo: "Chat" });
    const res = await post("deploys", { event_type: "deploy.finished", service: "api", status: "ok" });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { status: string; event: string; runId: string };
    expect(body).toMatchObject({ status: "accepted", event: "deploy.finished" });
    expect(body.runId).toMatch(/^run_/);
    const run = await waitFor(async () => (await runsOf("deploys")).find((r) => r.status === "delivered"));
    expect(run.id).toBe(body.runId);
    expect(await webTexts()).toEqual(["**Webhook: deploys**\n\ndone: Summarise deploy api (ok)"]);
  });

  it("posts a failure notice when a run fails outright", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "flaky", deliverTo: "Chat" });
    fake.respond = () => ({ content: [], status: 500 });
    expect((await post("flaky", { a: 1 }, { "x-github-event": "push" })).status).toBe(202);
    const run = await waitFor(async () => (await runsOf("flaky")).find((r) => r.status === "failed"));
    expect(run.error).toBeTruthy();
    const texts = await webTexts();
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/^\*\*Webhook: flaky\*\*\n\nThe run for event `push` failed: /);
  });
});

describe("queueing", () => {
  it("under 50 concurrent posts: 1 running + 10 pending accepted, the rest 429, executed in arrival order", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "burst", prompt: "item {n}", deliverTo: "Chat" });
    let inFlight = 0;
    let maxInFlight = 0;
    // The first run holds until every post is answered, so the queue is full during the burst.
    let release = () => {};
    const burstDone = new Promise<void>((r) => {
      release = r;
    });
    fake.respond = async (body) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await burstDone;
      // Holds the run briefly so a second run started alongside it (which must not happen) would overlap it.
      await new Promise((r) => setTimeout(r, 10));
      inFlight--;
      return { content: [{ type: "text", text: lastUserText(body) }] };
    };
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        post("burst", { n }).then(async (r) => ({ n, status: r.status, body: await r.json() })),
      ),
    );
    release();
    const accepted = responses.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(11);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(39);
    const limited = responses.find((r) => r.status === 429)?.body as { type: string };
    expect(limited.type).toMatch(/rate-limited$/);

    const runs = await waitFor(async () => {
      const all = await runsOf("burst");
      return all.length === 11 && all.every((r) => r.status === "delivered") ? all : undefined;
    }, 20_000);
    const nByRun = new Map(accepted.map((r) => [(r.body as { runId: string }).runId, r.n]));
    const arrival = [...runs].reverse().map((r) => nByRun.get(r.id));
    const executed = fake.requests.map((req) => Number(lastUserText(req.body).replace("item ", "")));
    expect(executed).toEqual(arrival);
    expect(maxInFlight).toBe(1);
    // Posted in execution order too.
    expect(await webTexts()).toEqual(arrival.map((n) => `**Webhook: burst**\n\nitem ${n}`));
  });

  it("runs different subscriptions concurrently", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "one", deliverTo: "Chat" });
    await subscribe({ name: "two", deliverTo: "Chat" });
    let inFlight = 0;
    let maxInFlight = 0;
    // Each model call answers only once both are in flight: run one after the other, they never would.
    let bothInFlight = () => {};
    const both = new Promise<void>((r) => {
      bothInFlight = r;
    });
    fake.respond = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (inFlight === 2) bothInFlight();
      await both;
      inFlight--;
      return { content: [{ type: "text", text: "ok" }] };
    };
    await Promise.all([post("one", { a: 1 }), post("two", { a: 2 })]);
    await waitFor(async () => (await webTexts()).length === 2 || undefined);
    expect(maxInFlight).toBe(2);
  });

  it("deliver-only with a verified sender is neither queued nor limited under load", async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({
      name: "notify",
      deliverOnly: true,
      deliverTo: "Chat",
      prompt: "alert {n}",
      verification: { kind: "github", secret: SENDER_SECRET },
    });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, n) => signedPost("notify", { n }).then((r) => r.status)),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    const texts = await webTexts();
    expect(texts).toHaveLength(200);
    expect(new Set(texts).size).toBe(200);
    expect(await runsOf("notify")).toHaveLength(0);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("a deliver-only subscription that verifies no sender", () => {
  it(`takes a burst of ${UNVERIFIED_DELIVERY_BURST}, then answers 429 with Retry-After, per subscription`, async () => {
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    await subscribe({ name: "open", deliverOnly: true, deliverTo: "Chat", prompt: "alert {n}" });
    await subscribe({ name: "other", deliverOnly: true, deliverTo: "Chat", prompt: "other {n}" });
    const statuses = await Promise.all(
      Array.from({ length: UNVERIFIED_DELIVERY_BURST + 30 }, (_, n) => post("open", { n }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(UNVERIFIED_DELIVERY_BURST);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    const refused = await post("open", { n: "late" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(2);
    const problem = (await refused.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/rate-limited$/);
    expect(problem.detail).toContain("verifies no sender");
    // Only what was taken reached the channel; another subscription has its own bound.
    expect(await webTexts()).toHaveLength(UNVERIFIED_DELIVERY_BURST);
    expect((await post("other", { n: 1 })).status).toBe(200);
  });

  it(`refills at ${UNVERIFIED_DELIVERIES_PER_MINUTE} a minute`, () => {
    let now = 0;
    const bound = new SenderBound(30, 2, () => now);
    expect([bound.take("a"), bound.take("a"), bound.take("a")]).toEqual([0, 0, 2]);
    expect(bound.take("b")).toBe(0);
    now += 1000;
    expect(bound.take("a")).toBe(1);
    now += 1000;
    expect(bound.take("a")).toBe(0);
    expect(bound.take("a")).toBe(2);
  });
});

describe("delivery targets", () => {
  async function withTeamChat(teamChat: InProcessTeamChat) {
    await rt.close();
    rt = await startTestRuntime(fake, { teamChat });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  }

  it("All channels: web chat and the owner's DM in personal mode, stored in web chat", async () => {
    const chat = new InProcessTeamChat({ mode: "personal", ownerDm: { id: "D-owner", kind: "dm" } });
    await withTeamChat(chat);
    await subscribe({ name: "all", deliverOnly: true, prompt: "hello" });
    expect((await post("all", {})).status).toBe(200);
    expect(await webTexts()).toEqual(["**Webhook: all**\n\nhello"]);
    expect(chat.posted).toEqual([{ destination: { id: "D-owner", kind: "dm" }, text: "**Webhook: all**\n\nhello" }]);
  });

  it("Team chat in team mode: the flagged main channel, else the oldest; stored in an unlisted thread", async () => {
    const chat = new InProcessTeamChat({
      mode: "team",
      channels: [
        { id: "C-new", kind: "channel", linkedAt: "2026-02-01T00:00:00Z", main: false },
        { id: "C-old", kind: "channel", linkedAt: "2026-01-01T00:00:00Z", main: false },
      ],
    });
    await withTeamChat(chat);
    await subscribe({ name: "team", deliverOnly: true, deliverTo: "Team chat", prompt: "hi {x}" });
    await post("team", { x: 1 });
    expect(chat.posted.map((p) => p.destination.id)).toEqual(["C-old"]);
    chat.channels[0] = { ...(chat.channels[0] as (typeof chat.channels)[number]), main: true };
    await post("team", { x: 2 });
    expect(chat.posted.map((p) => p.destination.id)).toEqual(["C-old", "C-new"]);
    expect(await webTexts()).toEqual([]);
    const threads = await rt.json<{ items: unknown[] }>("GET", "/agents/threads");
    expect(threads.body.items).toHaveLength(1);
    const stored = await rt.runtime.deps.database.db
      .selectFrom("thread")
      .select(["kind", "external_id"])
      .where("kind", "=", "team-chat")
      .orderBy("external_id")
      .execute();
    expect(stored).toEqual([
      { kind: "team-chat", external_id: "C-new" },
      { kind: "team-chat", external_id: "C-old" },
    ]);
  });

  it("Team chat with nothing linked falls back to the web thread; Chat never posts to team chat", async () => {
    const chat = new InProcessTeamChat({ mode: "personal", ownerDm: null });
    await withTeamChat(chat);
    await subscribe({ name: "tc", deliverOnly: true, deliverTo: "Team chat", prompt: "fallback" });
    await post("tc", {});
    expect(await webTexts()).toEqual(["**Webhook: tc**\n\nfallback"]);
    chat.ownerDm = { id: "D1", kind: "dm" };
    await subscribe({ name: "web-only", deliverOnly: true, deliverTo: "Chat", prompt: "web" });
    await post("web-only", {});
    expect(chat.posted).toEqual([]);
  });
});
