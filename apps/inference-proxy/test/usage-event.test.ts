// Each model call's usage event goes out under the id and time the proxy gave it: the envelope
// audit stores it by is the event's own id, not a second one drawn for the outbox row.
import { type EventEnvelope, type EventHandler, MemoryBus } from "@agentplane/events";
import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`the usage event of a call${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  const seen: EventEnvelope<Record<string, unknown>>[] = [];
  // The audit service consumes the events; this bus also keeps a copy of each usage event as its
  // consumer received it (handed over in process, or published through the outbox's table).
  const bus = new (class extends MemoryBus {
    override async subscribe<T>(topic: string, handler: EventHandler<T>) {
      if (topic !== "usage.recorded") return super.subscribe(topic, handler);
      return super.subscribe<T>(topic, async (event) => {
        await handler(event);
        seen.push(event as EventEnvelope<Record<string, unknown>>);
      });
    }
  })();

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform(
      { cloudBKey: CREDS.cloudBKey, cloudBBaseUrl: `${up.url}/anthropic/v1` },
      {},
      { bus },
    );
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  it("is published under the id and time it carries, once per call", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await h.call("POST", `/v1/projects/${h.projectId}/llm/cloud-b/family-1/anthropic/v1/messages`, {
        token: h.projectToken,
        body: { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
      });
      expect(res.status).toBe(200);
    }
    await eventually(() => seen.length === 3, "three usage events");
    for (const event of seen) {
      expect(event.data.id).toBe(event.id);
      expect(event.data.time).toBe(event.time);
      expect(event.data.reservationId).toMatch(/^rsv_/);
    }
    expect(new Set(seen.map((e) => e.id)).size).toBe(3);
  });
});
