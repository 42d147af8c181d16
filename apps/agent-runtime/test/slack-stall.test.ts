import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";

/**
 * Slack's Web API behind a relay that can stop answering some methods: the connection is taken,
 * the request read, and no answer ever comes (a stalled load balancer, a half-open connection).
 */
class StallingRelay {
  readonly stalled = new Set<string>();
  readonly #held: ServerResponse[] = [];
  readonly #server: Server;

  constructor(target: string) {
    this.#server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const method = /^\/api\/([a-zA-Z.]+)/.exec(req.url ?? "")?.[1] ?? "";
      if (this.stalled.has(method)) {
        req.resume();
        this.#held.push(res);
        return;
      }
      const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/api/`;
  }

  async close(): Promise<void> {
    for (const res of this.#held) res.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

let fake: FakeModel;
let standIn: SlackStandIn;
let relay: StallingRelay;
let rt: SlackTestRuntime;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia" });
  relay = new StallingRelay(standIn.url);
  const apiUrl = await relay.listen();
  rt = await startSlackRuntime(fake, standIn, {
    env: { CHAT_OWNER_ID: OWNER, CHAT_API_URL: apiUrl },
    slack: { webTimeoutMs: 300 },
  });
  expect(await settled(rt)).toMatchObject({ state: "connected" });
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
});
afterEach(async () => {
  await relay.close();
  await rt.close();
  await standIn.close();
});

/**
 * A Web API call that Slack never answers was waited on for minutes (the SDK sets no timeout, so
 * only the HTTP client's five-minute header wait ended it, then it was retried three times): the
 * webhook that posted it got no answer, a subscription's queue of runs stood still behind it, and
 * every turn slot of team chat could be held so. Each call now gives up after a bounded time; the
 * delivery is stored and posted by the retry pass once Slack answers again.
 */
describe("a Slack Web API that stops answering", () => {
  it("does not hold a deliver-only webhook: it answers, and the post arrives once Slack does", async () => {
    await rt.json("POST", "/agents/webhook-subscriptions", { name: "alerts", deliverOnly: true, prompt: "alert: {a}" });
    relay.stalled.add("chat.postMessage");
    const res = await fetch(`${rt.url}/agents/webhooks/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ a: "disk full" }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "delivered" });
    const dm = standIn.workspace.dm(OWNER).id;
    expect(answers(standIn, dm)).toEqual([]);
    relay.stalled.delete("chat.postMessage");
    const posted = await waitFor(() => {
      const texts = answers(standIn, dm).map((m) => m.text);
      return texts.length > 0 ? texts : undefined;
    });
    expect(posted).toEqual(["**Webhook: alerts**\n\nalert: disk full"]);
  });
});
